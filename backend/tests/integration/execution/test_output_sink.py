"""The output sink against a real Postgres: what a handler writes is readable while it runs,
complete once its attempt is finished, only the last 1 MiB is kept, and a failed flush loses
nothing."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from cronplane.domain.limits import OUTPUT_KEEP_BYTES
from cronplane.execution.output_sink import OutputSink, OutputSinkConfig
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.output import read_output
from cronplane.storage.database import Database
from cronplane.storage.output_store import OutputStore
from tests.integration.api.job_seed import insert_job
from tests.support.waiting import wait_until


@pytest.fixture
def own_db(fresh_database_url: str) -> Iterator[Database]:  # the sink's thread runs in it
    database = Database(fresh_database_url, application_name="cronplane-test-output")
    yield database
    database.close()


def _attempt_id(url: str, job_id: int) -> int:
    with psycopg.connect(url) as conn:
        return int(conn.execute("SELECT id FROM attempts WHERE job_id = %s AND number = 1",
                                (job_id,)).fetchone()[0])


def _read(db: Database, settings: object, job_id: int, offset: int = 0):
    return read_output(ManagementContext(settings=settings, db=db),  # type: ignore[arg-type]
                       Actor.system(), job_id, 1, offset)


def test_output_is_readable_while_running_and_complete_after_finish(own_db, settings) -> None:
    db = own_db
    job_id = insert_job(db.url, status="RUNNING", attempts=["RUNNING"])
    sink = OutputSink(OutputStore(db), OutputSinkConfig(interval=0.05))
    sink.start()
    try:
        out = sink.output(_attempt_id(db.url, job_id))
        out.line("first")
        part = wait_until(lambda: _read(db, settings, job_id).data and _read(db, settings, job_id),
                          message="the first line flushed by the sink's own tick")
        assert part.data == b"first\n" and part.running and part.next_offset == 6
        out.line("second")
        sink.finish(out)
        # finish() returns once written: no waiting needed for a reader after the outcome.
        rest = _read(db, settings, job_id, offset=part.next_offset)
        assert (rest.data, rest.offset, rest.total) == (b"second\n", 6, 13)
        out.line("after the end")
        sink.flush()
        assert _read(db, settings, job_id).data == b"first\nsecond\n", \
            "nothing written after finish may be added"
    finally:
        sink.stop()


def test_only_the_last_mebibyte_is_kept_and_read_from_its_real_offset(db, settings) -> None:
    job_id = insert_job(db.url, status="RUNNING", attempts=["RUNNING"])
    sink = OutputSink(OutputStore(db))
    out = sink.output(_attempt_id(db.url, job_id))
    line = ("x" * 1023) + "\n"
    for _ in range(3):  # three flushes of 600 KiB each: 1.8 MiB written, 1 MiB kept
        for _ in range(600):
            out.write(line)
        sink.flush()
    total = 3 * 600 * 1024
    part = _read(db, settings, job_id)
    assert part.total == total
    assert part.offset == total - OUTPUT_KEEP_BYTES and len(part.data) == OUTPUT_KEEP_BYTES, \
        "an old offset reads the kept last 1 MiB, which says where it starts"
    with psycopg.connect(db.url) as conn:
        stored = conn.execute("SELECT sum(length(data)) FROM attempt_output_chunks WHERE "
                              "attempt_id = %s", (_attempt_id(db.url, job_id),)).fetchone()[0]
    assert stored <= OUTPUT_KEEP_BYTES + 600 * 1024, "chunks wholly before the cut are deleted"
    assert _read(db, settings, job_id, offset=total).data == b""


def test_a_failed_flush_is_retried_and_loses_nothing(db, settings) -> None:
    job_id = insert_job(db.url, status="RUNNING", attempts=["RUNNING"])
    store = OutputStore(db)
    sink = OutputSink(store)
    out = sink.output(_attempt_id(db.url, job_id))
    out.write("one\n")
    real = store.append

    def down(chunks: object) -> None:
        raise psycopg.OperationalError("database unreachable")

    store.append = down  # type: ignore[method-assign]
    with pytest.raises(psycopg.OperationalError):
        sink.flush()
    store.append = real  # type: ignore[method-assign]
    out.write("two\n")
    sink.flush()
    assert _read(db, settings, job_id).data == b"one\ntwo\n"
