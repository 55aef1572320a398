"""The job state machine is one table: the SQL statements and ``domain/states.py`` agree on every
(job status, attempt ending) pair.

Every job status (a non-RUNNING job must be left alone: the compare-and-set) × every way an attempt
ends (the four outcomes a worker reports, a reclaim, a release) × cancel requested or not × attempts
left, none left, and at the schema's cap, is driven through the real statement of ``jobs.sql``
and through ``domain.states.job_transition``; status, allowed attempts and whether the statement
applied must be the same.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from cronplane.domain.states import (
    AttemptEnding,
    AttemptStatus,
    JobStatus,
    job_status_after_attempt,
    job_transition,
)
from cronplane.storage.database import Database
from cronplane.storage.job_store import JobStore, NewJob, Outcome

W = "host:1:state"
REPORTED = (AttemptStatus.SUCCEEDED, AttemptStatus.FAILED, AttemptStatus.TIMED_OUT,
            AttemptStatus.CANCELLED)
ENDINGS = [(AttemptEnding.COMPLETE, outcome) for outcome in REPORTED] + [
    (AttemptEnding.RECLAIM, AttemptStatus.LOST), (AttemptEnding.RELEASE, AttemptStatus.INTERRUPTED)]
# (attempt number, max attempts): attempts left, the last one, the schema's cap of 100.
POSITIONS = ((1, 3), (3, 3), (100, 100))


@pytest.fixture(scope="module")
def store(db: Database) -> Iterator[JobStore]:
    job_store = JobStore(db)
    yield job_store
    job_store.close()


def _job_in(store: JobStore, status: JobStatus, number: int, max_attempts: int,
            cancel_requested: bool, *, lease_expired: bool) -> tuple[int, int]:
    """A job in ``status`` whose attempt ``number`` is still RUNNING (the row a worker holds)."""
    [job_id] = store.insert_many([NewJob("noop", {}, max_attempts=max_attempts)], notify=False)
    with store.db.connection() as conn:
        conn.execute(
            "UPDATE jobs SET status = %s, attempt_count = %s, cancel_requested = %s, "
            "started_at = now() WHERE id = %s", (status.value, number, cancel_requested, job_id))
        attempt_id = conn.execute(
            "INSERT INTO attempts (job_id, number, status, worker_id, lease_expires_at) "
            "VALUES (%s, %s, 'RUNNING', %s, now() + CASE WHEN %s THEN interval '-1 second' "
            "ELSE interval '1 hour' END) RETURNING id",
            (job_id, number, W, lease_expired)).fetchone()["id"]
    return job_id, attempt_id


def _apply(store: JobStore, ending: AttemptEnding, outcome: AttemptStatus, job_id: int,
           attempt_id: int, number: int) -> bool:
    if ending is AttemptEnding.COMPLETE:
        [applied] = store.complete([Outcome(attempt_id, job_id, number, outcome.value,
                                            error=None if outcome is AttemptStatus.SUCCEEDED
                                            else "boom")])
        return not applied.rejected
    if ending is AttemptEnding.RECLAIM:
        _, reclaimed = store.reclaim_expired(limit=100)
        return job_id in [r.job_id for r in reclaimed]
    return job_id in store.release([(attempt_id, job_id, number)])


CASES = list(itertools.product(JobStatus, ENDINGS, (False, True), POSITIONS))


@pytest.mark.parametrize(("status", "ending", "cancel_requested", "position"), CASES,
                         ids=[f"{s}-{e[0]}-{e[1]}-{'cancel' if c else 'nocancel'}-{p[0]}of{p[1]}"
                              for s, e, c, p in CASES])
def test_statement_and_domain_agree_on_every_transition(
        store: JobStore, status: JobStatus, ending: tuple[AttemptEnding, AttemptStatus],
        cancel_requested: bool, position: tuple[int, int]) -> None:
    kind, outcome = ending
    number, max_attempts = position
    job_id, attempt_id = _job_in(store, status, number, max_attempts, cancel_requested,
                                 lease_expired=kind is AttemptEnding.RECLAIM)
    try:
        applied = _apply(store, kind, outcome, job_id, attempt_id, number)
        with store.db.connection() as conn:
            row = conn.execute("SELECT status, max_attempts, finished_at, run_at <= now() AS due "
                               "FROM jobs WHERE id = %s", (job_id,)).fetchone()
        expected = job_transition(status, kind, outcome=outcome, attempt_number=number,
                                  max_attempts=max_attempts, cancel_requested=cancel_requested)
        assert (row["status"], row["max_attempts"], applied) == (
            expected.status.value, expected.max_attempts, expected.applied)
        if expected.applied:
            # A job going back to the queue is not finished; every other ending finishes it.
            assert (row["finished_at"] is None) == (expected.status is JobStatus.PENDING)
    finally:
        with store.db.connection() as conn:
            conn.execute("DELETE FROM jobs WHERE id = %s", (job_id,))


def test_sql_function_is_the_domain_table_for_every_outcome(db: Database) -> None:
    with db.connection() as conn:
        for outcome, cancel, (number, max_attempts) in itertools.product(
                AttemptStatus, (False, True), (*POSITIONS, (2, 1))):
            got = conn.execute("SELECT job_status_after_attempt(%s, %s, %s, %s) AS s",
                               (outcome.value, number, max_attempts, cancel)).fetchone()["s"]
            if outcome is AttemptStatus.RUNNING:
                # Not an ending: NULL in SQL (jobs.status NOT NULL refuses it), an error in Python.
                assert got is None
                with pytest.raises(ValueError):
                    job_status_after_attempt(outcome, attempt_number=number,
                                             max_attempts=max_attempts, cancel_requested=cancel)
                continue
            assert got == job_status_after_attempt(outcome, attempt_number=number,
                                                   max_attempts=max_attempts,
                                                   cancel_requested=cancel).value
        assert conn.execute("SELECT job_status_after_attempt('BOGUS', 1, 3, false) AS s"
                            ).fetchone()["s"] is None


def test_interrupted_attempts_do_not_count_against_max_attempts(store: JobStore) -> None:
    """A release leaves max_attempts alone and is not counted: with max_attempts 1, the attempt
    after an interruption may still fail into DEAD only as the job's first real try, and a job
    interrupted twice then failed once with max_attempts 2 goes back to PENDING."""
    [job_id] = store.insert_many([NewJob("noop", {}, max_attempts=2)], notify=False)
    try:
        for number in (1, 2):
            _, attempt_id = _running(store, job_id, number)
            assert store.release([(attempt_id, job_id, number)]) == [job_id]
        _, attempt_id = _running(store, job_id, 3)
        [done] = store.complete([Outcome(attempt_id, job_id, 3, "FAILED", error="boom")])
        assert not done.rejected
        with store.db.connection() as conn:
            row = conn.execute("SELECT status, max_attempts, interruptions FROM jobs WHERE id = %s",
                               (job_id,)).fetchone()
            attempts = [r["status"] for r in conn.execute(
                "SELECT status FROM attempts WHERE job_id = %s ORDER BY number", (job_id,))]
        assert row == {"status": "PENDING", "max_attempts": 2, "interruptions": 2}
        assert attempts == ["INTERRUPTED", "INTERRUPTED", "FAILED"]
    finally:
        with store.db.connection() as conn:
            conn.execute("DELETE FROM jobs WHERE id = %s", (job_id,))


def _running(store: JobStore, job_id: int, number: int) -> tuple[int, int]:
    with store.db.connection() as conn:
        conn.execute("UPDATE jobs SET status = 'RUNNING', attempt_count = %s WHERE id = %s",
                     (number, job_id))
        attempt_id = conn.execute(
            "INSERT INTO attempts (job_id, number, status, worker_id, lease_expires_at) "
            "VALUES (%s, %s, 'RUNNING', %s, now() + interval '1 hour') RETURNING id",
            (job_id, number, W)).fetchone()["id"]
    return job_id, attempt_id

