"""Reading an attempt's output (``GET /jobs/{id}/attempts/{n}/output?offset=``), also while it runs.

Offsets are byte positions in everything the attempt wrote. Only the last ``OUTPUT_KEEP_BYTES``
are kept, so a reader asking for an older offset gets the kept part and learns where it starts
(``offset`` of the slice). A reader follows a running attempt by asking again from
``next_offset`` until ``running`` is False; the worker writes an attempt's remaining output
before its outcome, so the read after that is complete.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from cronplane.domain.limits import BIGINT_MAX, OUTPUT_KEEP_BYTES
from cronplane.domain.roles import Role
from cronplane.domain.states import AttemptStatus
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import NotFound
from cronplane.storage.models import Attempt, AttemptOutputChunk, Job


@dataclass(frozen=True)
class OutputSlice:
    data: bytes
    offset: int  # where ``data`` starts in the attempt's whole output
    total: int  # bytes the attempt has written so far (``output_bytes``)
    status: str  # the attempt's status

    @property
    def next_offset(self) -> int:
        return self.offset + len(self.data)

    @property
    def running(self) -> bool:
        return self.status == AttemptStatus.RUNNING


def read_output(ctx: ManagementContext, actor: Actor, job_id: int, number: int,
                offset: int = 0) -> OutputSlice:
    missing = f"Job {job_id} does not exist."
    if not 1 <= job_id <= BIGINT_MAX:
        raise NotFound(missing)
    with ctx.db.read_session() as session:
        project = session.scalars(select(Job.project).where(Job.id == job_id)).one_or_none()
        if project is None:
            raise NotFound(missing)
        scope.require(actor, project, Role.VIEWER, missing=missing)
        attempt = session.execute(
            select(Attempt.id, Attempt.status, Attempt.output_bytes)
            .where(Attempt.job_id == job_id, Attempt.number == number)).one_or_none()
        if attempt is None:
            raise NotFound(f"Job {job_id} has no attempt {number}.")
        start = max(offset, attempt.output_bytes - OUTPUT_KEEP_BYTES, 0)
        chunks = session.execute(
            select(AttemptOutputChunk.start_offset, AttemptOutputChunk.data)
            .where(AttemptOutputChunk.attempt_id == attempt.id,
                   AttemptOutputChunk.start_offset
                   + func.length(AttemptOutputChunk.data) > start)
            .order_by(AttemptOutputChunk.start_offset)).all()
    data = bytearray()
    begins = start
    for chunk_start, chunk in chunks:
        if not data:
            begins = max(start, chunk_start)  # nothing kept between ``start`` and here
        elif chunk_start != begins + len(data):
            break  # a hole (a chunk still being retried): stop where the output is contiguous
        data += chunk[max(0, begins - chunk_start):]
    return OutputSlice(data=bytes(data), offset=begins, total=attempt.output_bytes,
                       status=attempt.status)
