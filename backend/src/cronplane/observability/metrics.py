"""Prometheus metrics: what the process observes, plus the database's state at scrape time.

Two kinds of series:

- Observed in-process (claim latency, handler duration, fire lag, watchdog reclaims, HTTP
  latency): the execution plane and the HTTP layer call the ``observe_*``/``count_*`` functions
  below. Under gunicorn several worker processes observe independently; when
  ``PROMETHEUS_MULTIPROC_DIR`` is set (``serving.py`` sets it before anything imports
  prometheus_client), values go to per-process files and a scrape merges them, so any worker
  answers for all of them.
- Read from the database when scraped (jobs by status, queue depth, leader and fencing token):
  a custom collector asks a ``state`` function, so every worker reports the same cluster-wide
  truth and nothing needs to keep a gauge in sync.
"""

from __future__ import annotations

import logging
import os
import threading
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from cronplane.domain.states import ACTIVE_JOB_STATUSES, JobStatus

log = logging.getLogger(__name__)
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

_FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_SLOW = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0)
# A job may be created to run hours later (run_at, a dependency, a paused queue): up to a day.
_WAIT = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0, 3600.0, 21600.0,
         86400.0)
# Label sets of one per-(project, queue, handler) histogram a process keeps; beyond it a new
# combination is counted under "_other" in all three labels. Projects and queues are named by
# ADMINs/OPERATORs and handlers come from the registry, so this is a fuse, not a budget: it keeps
# a scrape bounded even if something names queues in a loop.
MAX_LABEL_SETS = 1000
OTHER = "_other"

CLAIM_LATENCY = Histogram(
    "cronplane_claim_latency_seconds",
    "Time from a job becoming due (run_at) to an attempt claiming it.", buckets=_SLOW)
HANDLER_DURATION = Histogram(
    "cronplane_handler_duration_seconds", "Wall time of one attempt's handler call.",
    ["handler"], buckets=_SLOW)
FIRE_LAG = Histogram(
    "cronplane_fire_lag_seconds",
    "Delay between a schedule's fire time and the scheduler enqueueing its job.", buckets=_SLOW)
WATCHDOG_RECLAIMS = Counter(
    "cronplane_watchdog_reclaims",  # exposed as cronplane_watchdog_reclaims_total
    "Attempts whose lease expired and that the watchdog reclaimed (marked LOST).")
HTTP_REQUEST_DURATION = Histogram(
    "cronplane_http_request_duration_seconds", "HTTP request latency by route template.",
    ["method", "route", "status"], buckets=_FAST)


QUEUE_CLAIM_LATENCY = Histogram(
    "cronplane_queue_claim_latency_seconds",
    "Due (run_at) → claimed, per project and queue (both are named by OPERATOR+ and projects "
    "by instance ADMINs, so the label sets stay bounded).",
    ["project", "queue"], buckets=_SLOW)


JOB_WAIT = Histogram(
    "cronplane_job_wait_seconds",
    "Created → first attempt started, per project, queue and handler (how long work waited: "
    "scheduled delay, dependencies, a paused or saturated queue, a backlog).",
    ["project", "queue", "handler"], buckets=_WAIT)
ATTEMPT_DURATION = Histogram(
    "cronplane_attempt_duration_seconds",
    "Wall time of one attempt's handler call, per project, queue and handler.",
    ["project", "queue", "handler"], buckets=_SLOW)


# Labelled children by label values: ``labels()`` validates and locks on every call, which was a
# visible share of the worker's per-job CPU in a noop drain (issue 16). A child never changes
# once created, so a plain dict lookup is enough (a lost race creates the same child twice).
_QUEUE_CLAIM_CHILDREN: dict[tuple[str, str], Histogram] = {}
_HANDLER_CHILDREN: dict[str, Histogram] = {}


def observe_claim_latency(seconds: float, queue: str = "default",
                          project: str = "default") -> None:
    child = _QUEUE_CLAIM_CHILDREN.get((project, queue))
    if child is None:
        child = _QUEUE_CLAIM_CHILDREN[(project, queue)] = QUEUE_CLAIM_LATENCY.labels(
            project=project, queue=queue)
    seconds = max(0.0, seconds)
    CLAIM_LATENCY.observe(seconds)
    child.observe(seconds)


def observe_handler_duration(handler: str, seconds: float) -> None:
    child = _HANDLER_CHILDREN.get(handler)
    if child is None:
        child = _HANDLER_CHILDREN[handler] = HANDLER_DURATION.labels(handler=handler)
    child.observe(max(0.0, seconds))


_WAIT_CHILDREN: dict[tuple[str, str, str], Histogram] = {}
_ATTEMPT_CHILDREN: dict[tuple[str, str, str], Histogram] = {}


def _bounded_child(children: dict[tuple[str, str, str], Histogram], family: Histogram,
                   key: tuple[str, str, str]) -> Histogram:
    child = children.get(key)
    if child is None:
        if len(children) >= MAX_LABEL_SETS:
            key = (OTHER, OTHER, OTHER)
            child = children.get(key)
        if child is None:
            child = children[key] = family.labels(*key)
    return child


def observe_job_wait(seconds: float, *, project: str, queue: str, handler: str) -> None:
    """A job's first attempt started ``seconds`` after the job was created."""
    # Per job on the worker's hot path: the dict hit first, the bounded creation only once.
    key = (project, queue, handler)
    child = _WAIT_CHILDREN.get(key) or _bounded_child(_WAIT_CHILDREN, JOB_WAIT, key)
    child.observe(seconds if seconds > 0.0 else 0.0)


def observe_attempt_duration(seconds: float, *, project: str, queue: str, handler: str) -> None:
    key = (project, queue, handler)
    child = _ATTEMPT_CHILDREN.get(key) or _bounded_child(_ATTEMPT_CHILDREN, ATTEMPT_DURATION, key)
    child.observe(seconds if seconds > 0.0 else 0.0)


# -- per round instead of per job (issue 43) -------------------------------------------------------
# ``Histogram.observe`` takes a lock and increments two values per observation; under ``serve``
# (PROMETHEUS_MULTIPROC_DIR) every increment also reads the pid and writes the process's mmap
# file, under one lock for the whole process: the executor threads and the claim loop queued on
# it, ~25 % of serve's per-job Python (py-spy, bench/RESULTS.md). The worker's hot path instead
# hands a round's observations over at once: per label set, one increment of the sum and one per
# bucket touched. A scrape sees the same counts and sums (the sum added up in another order:
# equal to the last bits of a float), a job's observations in before it is finished.
def _observe_many(child: Histogram, amounts: Sequence[float]) -> None:
    """``child.observe(a)`` for each ``a`` of ``amounts`` (none negative or NaN), at once."""
    if not amounts:
        return
    bounds = child._upper_bounds
    counts = [0] * len(bounds)
    for amount in amounts:
        counts[bisect_left(bounds, amount)] += 1  # the first bucket with amount <= bound
    child._sum.inc(sum(amounts))
    buckets = child._buckets
    for index, count in enumerate(counts):
        if count:
            buckets[index].inc(count)


def _queue_claim_child(project: str, queue: str) -> Histogram:
    child = _QUEUE_CLAIM_CHILDREN.get((project, queue))
    if child is None:
        child = _QUEUE_CLAIM_CHILDREN[(project, queue)] = QUEUE_CLAIM_LATENCY.labels(
            project=project, queue=queue)
    return child


# (claim lag, wait or None when not a first attempt, project, queue, handler)
ClaimObservation = tuple[float, float | None, str, str, str]


def observe_claims(claims: Iterable[ClaimObservation]) -> None:
    """One claim round: what ``observe_claim_latency`` and (for first attempts, a wait that is
    not None) ``observe_job_wait`` observe per claim."""
    lags: dict[tuple[str, str], list[float]] = {}
    waits: dict[tuple[str, str, str], list[float]] = {}
    for lag, wait, project, queue, handler in claims:
        lane = (project, queue)
        (lags.get(lane) or lags.setdefault(lane, [])).append(lag if lag > 0.0 else 0.0)
        if wait is not None:
            key = (project, queue, handler)
            (waits.get(key) or waits.setdefault(key, [])).append(wait if wait > 0.0 else 0.0)
    every: list[float] = []
    for (project, queue), amounts in lags.items():
        _observe_many(_queue_claim_child(project, queue), amounts)
        every.extend(amounts)
    _observe_many(CLAIM_LATENCY, every)
    for key, amounts in waits.items():
        _observe_many(_WAIT_CHILDREN.get(key) or _bounded_child(_WAIT_CHILDREN, JOB_WAIT, key),
                      amounts)


# Attempt run times waiting to be added: appended by the executor threads (a deque's append
# needs no lock of ours), added by ``flush_attempt_durations``.
_DEFERRED: deque[tuple[str, str, str, float]] = deque()
_FLUSH = threading.Lock()


def defer_attempt_duration(handler: str, seconds: float, *, project: str, queue: str) -> None:
    """What ``observe_handler_duration`` and ``observe_attempt_duration`` observe, added by the
    next ``flush_attempt_durations``: the completer calls it before it writes a batch of outcomes
    (the outcome of a run is submitted after this call), so a run is in the histograms before
    its job is finished in the database; a scrape of this process, and the worker's loop at
    every tick, call it too."""
    _DEFERRED.append((project, queue, handler, seconds if seconds > 0.0 else 0.0))


def flush_attempt_durations() -> None:
    # Under the lock even when nothing waits: a flush in progress on another thread has taken
    # runs it has not added yet, and whoever returns from here must find them added.
    with _FLUSH:
        if not _DEFERRED:
            return
        by_handler: dict[str, list[float]] = {}
        by_key: dict[tuple[str, str, str], list[float]] = {}
        pop = _DEFERRED.popleft
        for _ in range(len(_DEFERRED)):  # only this function takes from the deque
            project, queue, handler, seconds = pop()
            (by_handler.get(handler) or by_handler.setdefault(handler, [])).append(seconds)
            key = (project, queue, handler)
            (by_key.get(key) or by_key.setdefault(key, [])).append(seconds)
        for handler, amounts in by_handler.items():
            child = _HANDLER_CHILDREN.get(handler)
            if child is None:
                child = _HANDLER_CHILDREN[handler] = HANDLER_DURATION.labels(handler=handler)
            _observe_many(child, amounts)
        for key, amounts in by_key.items():
            _observe_many(_ATTEMPT_CHILDREN.get(key)
                          or _bounded_child(_ATTEMPT_CHILDREN, ATTEMPT_DURATION, key), amounts)


def observe_fire_lag(seconds: float) -> None:
    FIRE_LAG.observe(max(0.0, seconds))


def count_watchdog_reclaims(count: int = 1) -> None:
    if count > 0:
        WATCHDOG_RECLAIMS.inc(count)


_HTTP_CHILDREN: dict[tuple[str, str, int], Histogram] = {}


def observe_http_request(method: str, route: str, status: int, seconds: float) -> None:
    # Bounded like the series themselves: methods × route templates × statuses.
    key = (method, route, status)
    child = _HTTP_CHILDREN.get(key)
    if child is None:
        child = _HTTP_CHILDREN[key] = HTTP_REQUEST_DURATION.labels(
            method=method, route=route, status=str(status))
    child.observe(max(0.0, seconds))


@dataclass(frozen=True)
class ClusterState:
    """Database-derived state at scrape time."""

    jobs_by_status: Mapping[str, int]
    leader_owner: str | None
    fencing_token: int | None
    # (project, queue, pending, running, concurrency_limit) per queue
    queues: Sequence[tuple[str, str, int, int, int | None]] = ()
    # (project, queue, status) → jobs, for WAITING/PENDING/RUNNING, from the trigger-kept
    # counters (migration 0034): a scrape never counts jobs.
    queue_depth: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    # (project, queue) of the paused queues.
    paused_queues: Sequence[tuple[str, str]] = ()
    # The leader's continuous fire check (execution/fire_checker.py): both must stay 0.
    fires_missing: int = 0
    fires_duplicate: int = 0
    # All-time attempt seconds per project (usage_totals, migration 0025).
    attempt_seconds: Mapping[str, float] = field(default_factory=dict)


class ClusterStateCollector:
    """Yields the database-derived series; a failing read yields ``cronplane_state_up 0``."""

    def __init__(self, state: Callable[[], ClusterState]) -> None:
        self._state = state

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("cronplane_state_up",
                               "1 when the scrape could read cluster state from the database.")
        try:
            state = self._state()
        except Exception:
            log.warning("metrics: could not read cluster state", exc_info=True)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        # A counter in spirit (jobs ever created, by current status) but it can decrease as jobs
        # move between statuses, so it is exposed as a gauge named like the contract asks.
        total = GaugeMetricFamily("cronplane_jobs", "Jobs by current status.",
                                  labels=["status"])
        depth = GaugeMetricFamily("cronplane_queue_depth",
                                  "Jobs waiting (PENDING) or in flight (RUNNING).",
                                  labels=["status"])
        for status, count in sorted(state.jobs_by_status.items()):
            total.add_metric([status], count)
            if status in ACTIVE_JOB_STATUSES:
                depth.add_metric([status], count)
        yield total
        yield depth
        leader = GaugeMetricFamily("cronplane_leader",
                                   "1 for the process holding the scheduler lease.",
                                   labels=["owner"])
        fencing = GaugeMetricFamily("cronplane_fencing_token",
                                    "Fencing token of the current scheduler lease (0: none).")
        present = GaugeMetricFamily(
            "cronplane_leader_present",
            "1 while some process holds the scheduler lease, 0 while none does (no fires).")
        if state.leader_owner is not None:
            leader.add_metric([state.leader_owner], 1)
        present.add_metric([], 1 if state.leader_owner is not None else 0)
        fencing.add_metric([], state.fencing_token or 0)
        yield leader
        yield present
        yield fencing
        missing = CounterMetricFamily(
            "cronplane_fires_missing",
            "Fire times with neither a job nor a recorded skip (must stay 0).")
        missing.add_metric([], state.fires_missing)
        duplicate = CounterMetricFamily(
            "cronplane_fires_duplicate", "Fire times with more than one job (must stay 0).")
        duplicate.add_metric([], state.fires_duplicate)
        yield missing
        yield duplicate
        yield from _queue_families(state)
        seconds = CounterMetricFamily(
            "cronplane_attempt_seconds",
            "Run time of attempts that ended, start to end, per project (usage; all time).",
            labels=["project"])
        for project, value in sorted(state.attempt_seconds.items()):
            seconds.add_metric([project], value)
        yield seconds


DEPTH_STATUSES = (JobStatus.WAITING.value, JobStatus.PENDING.value, JobStatus.RUNNING.value)


def _queue_families(state: ClusterState) -> Iterator[Metric]:
    jobs = GaugeMetricFamily("cronplane_queue_jobs", "Jobs of a queue by status (WAITING = on "
                             "dependencies, PENDING = depth, RUNNING = running).",
                             labels=["project", "queue", "status"])
    saturation = GaugeMetricFamily(
        "cronplane_queue_limit_saturation",
        "RUNNING / concurrency_limit of a queue (1 = at its limit; absent when unlimited).",
        labels=["project", "queue"])
    paused = GaugeMetricFamily("cronplane_queue_paused",
                               "1 for a paused queue (its jobs stay PENDING, nothing claims them).",
                               labels=["project", "queue"])
    depth: dict[tuple[str, str, str], int] = {}
    for project, queue, pending, running, _limit in state.queues:
        depth[(project, queue, JobStatus.PENDING.value)] = pending
        depth[(project, queue, JobStatus.RUNNING.value)] = running
    depth.update(state.queue_depth)
    known = {(project, queue) for project, queue, *_ in state.queues}
    # Every queue the installation has (0 when empty), plus any the counters know of.
    names = sorted(known | {(p, q) for p, q, _ in depth})
    for project, queue in names:
        for status in DEPTH_STATUSES:
            jobs.add_metric([project, queue, status], depth.get((project, queue, status), 0))
    for project, queue, _pending, _running, limit in state.queues:
        if limit:
            running = depth.get((project, queue, JobStatus.RUNNING.value), 0)
            saturation.add_metric([project, queue], running / limit)
    for project, queue in state.paused_queues:
        paused.add_metric([project, queue], 1)
    yield jobs
    yield saturation
    yield paused


class _Scrape:
    """The collectors of one scrape, in the shape ``generate_latest`` expects."""

    def __init__(self, collectors: Iterable[object]) -> None:
        self._collectors = list(collectors)

    def collect(self) -> Iterator[Metric]:
        for collector in self._collectors:
            yield from collector.collect()  # type: ignore[attr-defined]


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


def render(state: Callable[[], ClusterState] | None = None) -> tuple[bytes, str]:
    """The exposition text for one scrape and its content type."""
    flush_attempt_durations()  # this process's runs not yet added (a scrape sees every run)
    collectors: list[object] = []
    if multiprocess_dir():
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        collectors.append(registry)
    else:
        collectors.append(REGISTRY)
    if state is not None:
        collectors.append(ClusterStateCollector(state))
    return generate_latest(_Scrape(collectors)), CONTENT_TYPE_LATEST
