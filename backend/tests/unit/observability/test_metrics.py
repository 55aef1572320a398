"""Metrics exposition: database-derived series at scrape time, process-observed series."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from cronplane.observability import metrics


def _samples(text: str) -> dict[tuple[str, tuple], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_cluster_state_is_exposed_per_status_with_leader_and_token() -> None:
    state = metrics.ClusterState(jobs_by_status={"PENDING": 4, "RUNNING": 2, "DEAD": 1},
                                 leader_owner="h:1:abc", fencing_token=9)
    body, content_type = metrics.render(lambda: state)
    assert content_type.startswith("text/plain")
    samples = _samples(body.decode())
    assert samples[("cronplane_jobs", (("status", "DEAD"),))] == 1
    assert samples[("cronplane_queue_depth", (("status", "PENDING"),))] == 4
    assert ("cronplane_queue_depth", (("status", "DEAD"),)) not in samples
    assert samples[("cronplane_leader", (("owner", "h:1:abc"),))] == 1
    assert samples[("cronplane_fencing_token", ())] == 9
    assert samples[("cronplane_state_up", ())] == 1


def test_no_leader_means_no_leader_series_and_token_zero() -> None:
    state = metrics.ClusterState(jobs_by_status={}, leader_owner=None, fencing_token=None)
    samples = _samples(metrics.render(lambda: state)[0].decode())
    assert not [k for k in samples if k[0] == "cronplane_leader"]
    assert samples[("cronplane_fencing_token", ())] == 0


def test_a_failing_state_read_still_answers() -> None:
    def broken() -> metrics.ClusterState:
        raise ConnectionError("database down")

    samples = _samples(metrics.render(broken)[0].decode())
    assert samples[("cronplane_state_up", ())] == 0


def test_observations_reach_the_exposition() -> None:
    metrics.observe_handler_duration("unit-test-handler", 0.2)
    metrics.count_watchdog_reclaims(2)
    metrics.observe_claim_latency(0.01)
    metrics.observe_fire_lag(0.5)
    samples = _samples(metrics.render()[0].decode())
    assert samples[("cronplane_handler_duration_seconds_count",
                    (("handler", "unit-test-handler"),))] >= 1
    assert samples[("cronplane_watchdog_reclaims_total", ())] >= 2
    assert samples[("cronplane_claim_latency_seconds_count", ())] >= 1
    assert samples[("cronplane_fire_lag_seconds_count", ())] >= 1


def test_multiprocess_mode_merges_process_files(tmp_path, monkeypatch) -> None:
    """With PROMETHEUS_MULTIPROC_DIR set, a scrape reads the per-process files (gunicorn)."""
    monkeypatch.setenv(metrics.MULTIPROC_ENV, str(tmp_path))
    body, _ = metrics.render(lambda: metrics.ClusterState({}, None, None))
    assert b"cronplane_state_up" in body  # the files may be empty; the scrape must still work
