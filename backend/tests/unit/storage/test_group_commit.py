"""The group commit's batching and failure rules, with a flush that records its calls."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from psycopg import errors as pg_errors

from cronplane.storage.group_commit import GroupCommit


class Recorder:
    """A flush that doubles its items, blocks while ``gate`` is closed, and fails for 'bad'."""

    def __init__(self) -> None:
        self.batches: list[list[object]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()

    def __call__(self, items: Sequence[object]) -> list[object]:
        self.batches.append(list(items))
        self.entered.set()
        self.gate.wait(10)
        if "bad" in items:
            raise pg_errors.CheckViolation("bad row")
        if "lost" in items:
            raise psycopg.OperationalError("connection lost")
        return [f"{item}!" for item in items]


def test_a_lone_call_is_flushed_at_once_as_a_batch_of_one() -> None:
    flush = Recorder()
    assert GroupCommit(flush).submit("a") == "a!"
    assert flush.batches == [["a"]]


def test_calls_arriving_during_a_flush_share_the_next_one_and_each_gets_its_own_result() -> None:
    flush = Recorder()
    group: GroupCommit[object, object] = GroupCommit(flush)
    flush.gate.clear()
    with ThreadPoolExecutor(6) as pool:
        first = pool.submit(group.submit, "first")
        assert flush.entered.wait(5)
        rest = [pool.submit(group.submit, f"r{i}") for i in range(5)]
        time.sleep(0.2)  # all five queued behind the blocked flush
        assert not first.done(), "nobody is answered before its flush returned"
        flush.gate.set()
        assert first.result(5) == "first!"
        assert [f.result(5) for f in rest] == [f"r{i}!" for i in range(5)]
    assert flush.batches[0] == ["first"]
    assert len(flush.batches) == 2 and sorted(flush.batches[1]) == [f"r{i}" for i in range(5)], \
        f"the five waiting calls must share one flush: {flush.batches}"


def test_max_batch_bounds_a_flush() -> None:
    flush = Recorder()
    group: GroupCommit[object, object] = GroupCommit(flush, max_batch=2)
    flush.gate.clear()
    with ThreadPoolExecutor(6) as pool:
        pool.submit(group.submit, "first")
        assert flush.entered.wait(5)
        rest = [pool.submit(group.submit, f"r{i}") for i in range(5)]
        time.sleep(0.2)
        flush.gate.set()
        assert sorted(f.result(5) for f in rest) == sorted(f"r{i}!" for i in range(5))
    assert all(len(b) <= 2 for b in flush.batches), flush.batches


def test_a_row_the_server_refused_fails_only_its_own_caller() -> None:
    flush = Recorder()
    group: GroupCommit[object, object] = GroupCommit(flush)
    flush.gate.clear()
    with ThreadPoolExecutor(4) as pool:
        pool.submit(group.submit, "first")
        assert flush.entered.wait(5)
        good = pool.submit(group.submit, "good")
        bad = pool.submit(group.submit, "bad")
        also = pool.submit(group.submit, "also")
        time.sleep(0.2)
        flush.gate.set()
        assert good.result(5) == "good!" and also.result(5) == "also!"
        with pytest.raises(pg_errors.CheckViolation):
            bad.result(5)
    # The failed batch of three, then each of its items alone.
    assert sorted(flush.batches[1]) == ["also", "bad", "good"]
    assert sorted(map(tuple, flush.batches[2:])) == [("also",), ("bad",), ("good",)]


def test_a_lost_connection_is_not_retried_since_the_commit_may_have_happened() -> None:
    flush = Recorder()
    group: GroupCommit[object, object] = GroupCommit(flush)
    flush.gate.clear()
    with ThreadPoolExecutor(3) as pool:
        pool.submit(group.submit, "first")
        assert flush.entered.wait(5)
        lost = pool.submit(group.submit, "lost")
        other = pool.submit(group.submit, "other")
        time.sleep(0.2)
        flush.gate.set()
        for future in (lost, other):
            with pytest.raises(psycopg.OperationalError):
                future.result(5)
    assert len(flush.batches) == 2, "a write that may have committed must not be written again"
