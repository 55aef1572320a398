"""Dependencies in the mix (issue 44): what the failover nemesis and a crash test add to their load,
and what must hold afterwards however the run was broken.

The mix, made through the API as a user makes it: diamonds of jobs (A; B and C depend on A; D on
B and C), a doomed pair (an upstream that fails with ``max_attempts: 1``, and its dependent),
batches with an ``on_complete`` callback; the caller adds a schedule chain (a per-second
schedule whose ``upstream`` is another). The checks read the database:

- no downstream started before its upstream finished, nor, under ``run_when: succeeded``,
  unless that upstream SUCCEEDED (chained fires: and of the same fire time);
- a doomed dependent never ran and was CANCELLED naming its upstream;
- nothing left WAITING (after the caller paused its schedules);
- every batch's callback ran to success exactly once, with the batch's exact counts in its
  payload, and the trigger-kept counts equal a count over the batch's jobs.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
import requests
from psycopg.rows import dict_row

# (path under /api/v1, JSON body) → (HTTP status, JSON answer or None); status 0: no answer.
Post = Callable[[str, dict[str, Any]], tuple[int, Any]]


def http_post(bases: Sequence[str], token: str) -> Post:
    """The mix's client against real servers: POSTs to each of ``bases`` in turn; no answer
    (refused, reset, timed out) is status 0."""
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    turns = itertools.count()

    def post(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        base = bases[next(turns) % len(bases)]
        try:
            answer = session.post(f"{base}/api/v1{path}", json=body, timeout=20)
        except requests.RequestException:
            return 0, None
        return answer.status_code, answer.json() if answer.ok else None

    return post


@dataclass
class DependencyMix:
    """Adds graphs through ``post``; remembers what was acknowledged (2xx). A graph cut short by
    a refused request (503 during a failover) is kept as far as it was acknowledged: its edges
    are in the database and checked like the others."""

    post: Post
    seconds: float = 0.05
    jobs: list[int] = field(default_factory=list)
    doomed: list[tuple[int, int]] = field(default_factory=list)
    batches: list[tuple[int, int, int]] = field(default_factory=list)  # id, callback, size
    failures: list[tuple[str, int]] = field(default_factory=list)  # 5xx other than 503

    def _job(self, body: dict[str, Any]) -> int | None:
        status, answer = self.post("/jobs", body)
        self._judge("/jobs", status)
        if 200 <= status < 300:
            self.jobs.append(int(answer["id"]))
            return int(answer["id"])
        return None

    def _judge(self, path: str, status: int) -> None:
        # As the failover load judges: 503 (with Retry-After) is allowed, no answer is not.
        if status == 0 or (status >= 500 and status != 503):
            self.failures.append((path, status))

    def _sleep(self, **extra: Any) -> dict[str, Any]:
        return {"handler": "sleep", "payload": {"seconds": self.seconds}, **extra}

    def add_diamond(self) -> bool:
        top = self._job(self._sleep())
        if top is None:
            return False
        left = self._job(self._sleep(depends_on=[top]))
        right = self._job(self._sleep(depends_on=[top]))
        if left is None or right is None:
            return False
        return self._job(self._sleep(depends_on=[left, right])) is not None

    def add_doomed(self) -> bool:
        upstream = self._job({"handler": "fail", "payload": {"message": "upstream fails"},
                              "max_attempts": 1})
        if upstream is None:
            return False
        dependent = self._job(self._sleep(depends_on=[upstream]))
        if dependent is None:
            return False
        self.doomed.append((upstream, dependent))
        return True

    def add_batch(self, size: int) -> bool:
        status, answer = self.post("/batches", {
            "jobs": [self._sleep() for _ in range(size)],
            "on_complete": {"handler": "noop", "payload": {"mix": True}}})
        self._judge("/batches", status)
        if not 200 <= status < 300:
            return False
        self.jobs += [int(i) for i in answer["job_ids"]]
        self.jobs.append(int(answer["callback_job_id"]))
        self.batches.append((int(answer["id"]), int(answer["callback_job_id"]), size))
        return True


class MixLoad:
    """A thread adding to a ``DependencyMix`` while a run is broken: a diamond every ``every``
    seconds, a doomed pair every fifth turn and a batch of ``batch`` every tenth (both from the
    first, and repeated until one is acknowledged)."""

    def __init__(self, mix: DependencyMix, *, every: float = 0.5, batch: int = 20) -> None:
        self.mix = mix
        self.every = every
        self.batch = batch
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dependency-mix", daemon=True)

    def start(self) -> MixLoad:
        self._thread.start()
        return self

    def stop(self) -> DependencyMix:
        self._stop.set()
        self._thread.join(60)
        return self.mix

    def _run(self) -> None:
        turn = 0
        while not self._stop.is_set():
            turn += 1
            self.mix.add_diamond()
            # From the first turn on, and on every turn until one was acknowledged: a short run
            # on a slow machine, whose first pair met the failover's 503s, still has one of each.
            if turn % 5 == 1 or not self.mix.doomed:
                self.mix.add_doomed()
            if turn % 10 == 1 or not self.mix.batches:
                self.mix.add_batch(self.batch)
            self._stop.wait(self.every)


# -- the checks --------------------------------------------------------------------------------
def _query(url: str, sql: str, *args: Any) -> list[dict[str, Any]]:
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        return conn.execute(sql, args).fetchall()  # type: ignore[arg-type]


def early_starts(url: str) -> list[dict[str, Any]]:
    """Every dependency edge (jobs, batch callbacks, chained fires) whose downstream started an
    attempt before its upstream had finished, or before it had SUCCEEDED under ``run_when:
    succeeded``, or that waits on another fire time."""
    return _query(url, """
        SELECT e.job_id, e.upstream_id, d.run_when, u.status AS upstream_status,
               u.finished_at AS upstream_finished, min(a.started_at) AS first_start,
               d.fire_time, u.fire_time AS upstream_fire
          FROM job_dependencies e
          JOIN jobs d ON d.id = e.job_id
          JOIN jobs u ON u.id = e.upstream_id
          JOIN attempts a ON a.job_id = d.id
         GROUP BY e.job_id, e.upstream_id, d.id, u.id
        HAVING u.finished_at IS NULL OR min(a.started_at) < u.finished_at
            OR (d.run_when = 'succeeded' AND u.status <> 'SUCCEEDED')
            OR (d.schedule_id IS NOT NULL AND u.schedule_id IS NOT NULL
                AND d.fire_time IS DISTINCT FROM u.fire_time)""")


def still_waiting(url: str) -> list[dict[str, Any]]:
    return _query(url, "SELECT id, schedule_id, waiting_on FROM jobs WHERE status = 'WAITING'")


def unsettled(url: str, ids: list[int]) -> int:
    """Jobs of ``ids`` not yet in a final state."""
    return int(_query(url, "SELECT count(*) AS n FROM jobs WHERE id = ANY(%s) AND status NOT IN "
                           "('SUCCEEDED', 'DEAD', 'CANCELLED')", ids)[0]["n"])


def doomed_problems(url: str, doomed: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """Doomed pairs whose dependent ran, or is not CANCELLED naming its DEAD upstream."""
    problems = []
    for upstream, dependent in doomed:
        row = _query(url, "SELECT j.status, j.error, u.status AS upstream_status, "
                          "(SELECT count(*) FROM attempts WHERE job_id = j.id) AS attempts "
                          "FROM jobs j, jobs u WHERE j.id = %s AND u.id = %s",
                     dependent, upstream)[0]
        if (row["attempts"] or row["status"] != "CANCELLED" or row["upstream_status"] != "DEAD"
                or str(upstream) not in (row["error"] or "")):
            problems.append({"upstream": upstream, "dependent": dependent, **row})
    return problems


def batch_problems(url: str, batches: list[tuple[int, int, int]]) -> list[dict[str, Any]]:
    """Batches whose callback did not run to success exactly once with the exact counts, or
    whose kept counts differ from a count over their jobs."""
    problems = []
    for batch, callback, size in batches:
        kept = _query(url, "SELECT total, waiting, pending, running, succeeded, dead, cancelled "
                           "FROM batches WHERE id = %s", batch)[0]
        counted = {r["status"].lower(): r["n"] for r in _query(
            url, "SELECT status, count(*)::int AS n FROM jobs WHERE batch_id = %s "
                 "GROUP BY status", batch)}
        expected = {k: counted.get(k, 0) for k in
                    ("waiting", "pending", "running", "succeeded", "dead", "cancelled")}
        runs = [r["status"] for r in _query(
            url, "SELECT status FROM attempts WHERE job_id = %s ORDER BY number", callback)]
        payload = _query(url, "SELECT payload FROM jobs WHERE id = %s", callback)[0]["payload"]
        want = {"mix": True, "batch": {"id": batch, "succeeded": size, "dead": 0,
                                       "cancelled": 0}}
        if (runs.count("SUCCEEDED") != 1 or payload != want or kept["total"] != size
                or {k: v for k, v in kept.items() if k != "total"} != expected):
            problems.append({"batch": batch, "callback_attempts": runs, "payload": payload,
                             "kept": kept, "counted": counted})
    return problems


def check(url: str, mix: DependencyMix) -> dict[str, int]:
    """Asserts the mix's invariants (after every job of it settled); returns what was checked."""
    early = early_starts(url)
    assert not early, f"downstream runs that did not wait for their upstream: {early[:5]}"
    waiting = still_waiting(url)
    assert not waiting, f"jobs left WAITING: {waiting[:10]}"
    doomed = doomed_problems(url, mix.doomed)
    assert not doomed, f"dependents of a failed upstream that ran or were not cancelled: {doomed}"
    batches = batch_problems(url, mix.batches)
    assert not batches, f"batch callbacks or counts wrong: {batches}"
    assert not mix.failures, f"answers the contract forbids: {mix.failures[:10]}"
    edges = int(_query(url, "SELECT count(*) AS n FROM job_dependencies")[0]["n"])
    return {"jobs": len(mix.jobs), "edges": edges, "doomed": len(mix.doomed),
            "batches": len(mix.batches)}
