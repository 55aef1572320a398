"""The worker's observations per round (issue 43): ``observe_claims`` and the deferred run
times give a scrape the same buckets, counts and sums as observing every job one by one."""

from __future__ import annotations

import math
import secrets

import pytest
from prometheus_client import REGISTRY

from cronplane.observability import metrics

# Across every bucket of _SLOW and _WAIT, their bounds exactly, below zero and beyond the last.
AMOUNTS = [-3.0, 0.0, 0.004, 0.01, 0.05, 0.0500001, 0.7, 1.0, 4.2, 10.0, 59.0, 60.0, 299.0,
           1800.0, 5000.0, 86400.0, 90000.0, math.inf, 0.3, 0.3, 0.3]
# The unlabelled claim latency is shared by the whole process: nothing infinite in its sum.
FINITE = [a for a in AMOUNTS if math.isfinite(a)]


def _series(name: str, labels: dict[str, str]) -> dict[str, float]:
    """Buckets, count and sum of one histogram's label set, from the exposition."""
    out: dict[str, float] = {}
    for family in REGISTRY.collect():
        for sample in family.samples:
            extra = {k: v for k, v in sample.labels.items() if k != "le"}
            if sample.name.startswith(name) and extra == labels \
                    and not sample.name.endswith("_created"):
                out[sample.name[len(name):] + sample.labels.get("le", "")] = sample.value
    return out


def _same(one: dict[str, float], other: dict[str, float]) -> None:
    assert one.keys() == other.keys() and one
    for key, value in one.items():
        assert other[key] == pytest.approx(value, rel=1e-12), key


def test_a_claim_round_observes_what_observing_each_claim_does() -> None:
    one, batched = f"one-{secrets.token_hex(3)}", f"batch-{secrets.token_hex(3)}"
    before = _series("cronplane_claim_latency_seconds", {})
    for n, amount in enumerate(FINITE):
        metrics.observe_claim_latency(amount, "q", one)
        if n % 3:
            metrics.observe_job_wait(amount, project=one, queue="q", handler="noop")
    middle = _series("cronplane_claim_latency_seconds", {})
    metrics.observe_claims([(amount, amount if n % 3 else None, batched, "q", "noop")
                            for n, amount in enumerate(FINITE)])
    after = _series("cronplane_claim_latency_seconds", {})
    for name, labels in (("cronplane_queue_claim_latency_seconds", {"queue": "q"}),
                         ("cronplane_job_wait_seconds", {"queue": "q", "handler": "noop"})):
        _same(_series(name, {**labels, "project": one}),
              _series(name, {**labels, "project": batched}))
    # The unlabelled claim latency grew by the same in both halves.
    _same({k: middle[k] - before.get(k, 0.0) for k in middle},
          {k: after[k] - middle[k] for k in after})
    assert _series("cronplane_job_wait_seconds", {"project": batched, "queue": "q",
                                                   "handler": "noop"})["_count"] == 13


def test_deferred_run_times_reach_a_scrape_as_observing_each_run_does() -> None:
    one, batched = f"one-{secrets.token_hex(3)}", f"batch-{secrets.token_hex(3)}"
    for amount in AMOUNTS:
        metrics.observe_handler_duration(one, amount)
        metrics.observe_attempt_duration(amount, project=one, queue="q", handler=one)
        metrics.defer_attempt_duration(batched, amount, project=batched, queue="q")
    # Nothing of the deferred ones yet: they are added at the next flush (the completer's,
    # before it writes the outcomes; the worker's tick; a scrape of this process).
    assert _series("cronplane_attempt_duration_seconds",
                   {"project": batched, "queue": "q", "handler": batched}) == {}
    text = metrics.render()[0].decode()
    assert f'cronplane_attempt_duration_seconds_count{{handler="{batched}"' in text
    _same(_series("cronplane_attempt_duration_seconds",
                  {"project": one, "queue": "q", "handler": one}),
          _series("cronplane_attempt_duration_seconds",
                  {"project": batched, "queue": "q", "handler": batched}))
    _same(_series("cronplane_handler_duration_seconds", {"handler": one}),
          _series("cronplane_handler_duration_seconds", {"handler": batched}))
    metrics.flush_attempt_durations()  # nothing left: a no-op
    assert _series("cronplane_handler_duration_seconds",
                   {"handler": batched})["_count"] == len(AMOUNTS)


def test_claim_rounds_fold_label_sets_past_the_fuse_like_one_by_one(monkeypatch) -> None:
    monkeypatch.setattr(metrics, "_WAIT_CHILDREN", {})
    monkeypatch.setattr(metrics, "MAX_LABEL_SETS", 2)
    metrics.observe_claims([(0.1, 1.0, "fuse-b", f"q{n}", "noop") for n in range(4)])
    children = metrics._WAIT_CHILDREN
    assert set(children) == {("fuse-b", "q0", "noop"), ("fuse-b", "q1", "noop"),
                             (metrics.OTHER, metrics.OTHER, metrics.OTHER)}


def test_a_failing_before_write_callback_does_not_keep_outcomes_from_being_written() -> None:
    from cronplane.execution.completer import Completer
    from cronplane.storage.job_store import Applied, Outcome

    written: list[int] = []

    class Store:
        def complete(self, batch: list[Outcome]) -> list[Applied]:
            written.extend(o.attempt_id for o in batch)
            return [Applied(o.attempt_id, o.job_id, "SUCCEEDED") for o in batch]

    order: list[str] = []
    completer = Completer(Store())  # type: ignore[arg-type]
    completer.before_write(lambda: order.append("before"))
    completer.before_write(lambda: 1 / 0)
    completer.after_write(lambda: order.append("after"))
    completer.submit(Outcome(attempt_id=7, job_id=70, number=1, status="SUCCEEDED"))
    completer.flush()
    assert written == [7] and order == ["before", "after"]
