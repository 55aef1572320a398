"""The SQL of a job search (``q`` of ``GET /jobs``, ``/jobs/count`` and the bulk filter), one
definition so a list and "all N matching" always select the same jobs."""

from __future__ import annotations

from sqlalchemy import ColumnElement, Text, and_, false, func, or_
from sqlalchemy.dialects.postgresql import array

from cronplane.domain.job_search import parse
from cronplane.domain.states import JobStatus
from cronplane.storage.models import Job


def search_condition(text: str) -> ColumnElement[bool]:
    """The job the text names by id, or jobs whose handler, key or error has every word as a
    prefix. The text match is split by finished/active so each half is answered by an index: the
    partial GIN index ``ix_jobs_search`` (finished jobs) and ``ix_jobs_status_id`` (the few active)."""
    search = parse(text)
    conditions: list[ColumnElement[bool]] = []
    if search.job_id is not None:
        conditions.append(Job.id == search.job_id)
    if search.tsquery is not None:
        # Words: jobs_search_query (migration 0021) keeps a prefix only where a typed word ends,
        # so a word the parser splits (``host-417``) does not make a prefix of a lexeme that most
        # rows carry (``host``), which GIN answers by reading that lexeme's whole posting list.
        query = (func.jobs_search_query(array(search.words, type_=Text)) if search.words
                 else func.to_tsquery("simple", search.tsquery))
        matches = func.jobs_search_vector(Job.handler, Job.idempotency_key, Job.error).op("@@")(
            query)
        conditions += [and_(Job.finished_at.is_not(None), matches),
                       and_(Job.status.in_((JobStatus.PENDING.value, JobStatus.RUNNING.value)), matches)]
    return or_(*conditions) if conditions else false()
