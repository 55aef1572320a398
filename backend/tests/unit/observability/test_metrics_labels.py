"""The per-queue series: depth by WAITING/PENDING/RUNNING for every queue (0 when empty), paused
queues and whether a leader exists; and the per-(project, queue, handler) histograms keep a
bounded number of label sets."""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from cronplane.observability import metrics


def _samples(state: metrics.ClusterState) -> dict[tuple[str, tuple], float]:
    registry = CollectorRegistry()
    registry.register(metrics.ClusterStateCollector(lambda: state))  # type: ignore[arg-type]
    text = generate_latest(registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_every_queue_reports_each_depth_status_and_paused_queues_say_so() -> None:
    state = metrics.ClusterState(
        jobs_by_status={}, leader_owner=None, fencing_token=None,
        queues=[("a", "empty", 0, 0, None), ("a", "busy", 0, 0, 4)],
        queue_depth={("a", "busy", "PENDING"): 7, ("a", "busy", "RUNNING"): 2,
                     ("a", "busy", "WAITING"): 3},
        paused_queues=[("a", "empty")])
    samples = _samples(state)

    def depth(queue: str, status: str) -> float:
        return samples[("cronplane_queue_jobs",
                        (("project", "a"), ("queue", queue), ("status", status)))]

    assert (depth("busy", "PENDING"), depth("busy", "RUNNING"), depth("busy", "WAITING")) == (7, 2, 3)
    assert (depth("empty", "PENDING"), depth("empty", "RUNNING"), depth("empty", "WAITING")) == (0, 0, 0)
    assert samples[("cronplane_queue_limit_saturation", (("project", "a"), ("queue", "busy")))] == 0.5
    assert samples[("cronplane_queue_paused", (("project", "a"), ("queue", "empty")))] == 1
    assert ("cronplane_queue_paused", (("project", "a"), ("queue", "busy"))) not in samples
    assert samples[("cronplane_leader_present", ())] == 0, "no lease holder: 0, not absent"


def test_per_handler_histograms_fold_label_sets_past_the_fuse(monkeypatch) -> None:
    monkeypatch.setattr(metrics, "MAX_LABEL_SETS", 3)
    monkeypatch.setattr(metrics, "_WAIT_CHILDREN", {})
    other = {"project": metrics.OTHER, "queue": metrics.OTHER, "handler": metrics.OTHER}
    before = REGISTRY.get_sample_value("cronplane_job_wait_seconds_count", other) or 0
    for n in range(10):
        metrics.observe_job_wait(1.0, project="fuse", queue=f"q{n}", handler="noop")
    assert len(metrics._WAIT_CHILDREN) == 4, "three label sets, then _other"
    assert REGISTRY.get_sample_value("cronplane_job_wait_seconds_count", other) == before + 7
    # Clock skew between database and worker never makes a negative observation.
    metrics.observe_job_wait(-5.0, project="fuse", queue="q0", handler="noop")
    assert REGISTRY.get_sample_value("cronplane_job_wait_seconds_bucket",
                                     {"project": "fuse", "queue": "q0", "handler": "noop",
                                      "le": "0.01"}) == 1
