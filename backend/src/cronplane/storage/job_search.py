"""The SQL of a job search (``q`` of ``GET /jobs``, ``/jobs/count`` and the bulk filter), one
definition so a list and "all N matching" always select the same jobs."""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, false, func, or_

from cronplane.domain.job_search import parse
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
        matches = func.jobs_search_vector(Job.handler, Job.idempotency_key, Job.error).op("@@")(
            func.to_tsquery("simple", search.tsquery))
        conditions += [and_(Job.finished_at.is_not(None), matches),
                       and_(Job.status.in_(("PENDING", "RUNNING")), matches)]
    return or_(*conditions) if conditions else false()
