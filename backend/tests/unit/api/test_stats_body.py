"""``GET /stats``'s encoder writes what its documented schema would (issue 16)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone

import pytest

from cronplane.api.stats import StatsSchema, stats_body
from cronplane.domain.states import JobStatus
from cronplane.management.stats import (
    ActiveExperiment,
    FailingChannel,
    Leader,
    Stats,
    ThroughputMinute,
    WorkerLiveness,
)

PARIS = timezone(timedelta(hours=1))
START = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


def full() -> Stats:
    """Every field set; instants in UTC and another offset, with and without microseconds."""
    return Stats(
        jobs_by_status={status.value: index * 1000 for index, status in enumerate(JobStatus)},
        throughput=[ThroughputMinute(minute=START + timedelta(minutes=i), succeeded=i * 7,
                                     failed=i % 3) for i in range(60)],
        leader=Leader(owner="host-1:42", fencing_token=2**40,
                      expires_at=datetime(2026, 12, 2, 11, 0, 1, 250000, tzinfo=PARIS)),
        workers=[WorkerLiveness(id=f"w-{i}", host="hôst", pid=100 + i,
                                heartbeat_at=START + timedelta(microseconds=i), running=i)
                 for i in range(3)],
        chaos=[ActiveExperiment(id=9, kind="db_latency", expires_at=START.astimezone(PARIS))],
        deliveries_by_status={"DEAD": 685, "SUCCEEDED": 3},
        failing_channels=[FailingChannel(id=3, project="payments", name="oncall-slack",
                                         kind="slack", failures_in_a_row=200,
                                         last_success_at=START.astimezone(PARIS)),
                          FailingChannel(id=4, project="default", name="hook", kind="webhook",
                                         failures_in_a_row=3, last_success_at=None)])


VARIANTS = {
    "full": full(),
    "no leader, nothing live": dataclasses.replace(full(), leader=None, workers=[], chaos=[],
                                                   throughput=[], failing_channels=[],
                                                   deliveries_by_status={}),
    "empty counts": dataclasses.replace(full(), jobs_by_status={}),
}


@pytest.mark.parametrize("stats", VARIANTS.values(), ids=VARIANTS.keys())
def test_the_encoder_equals_the_schemas_dump(stats: Stats) -> None:
    assert stats_body(stats) == StatsSchema().dump(stats)


def test_every_schema_field_is_written() -> None:
    """A field added to the schema (or a nested one) and not to the encoder fails here."""
    body = stats_body(full())
    schema = StatsSchema()
    assert set(body) == set(schema.dump_fields)
    for name in ("throughput", "workers", "chaos", "failing_channels"):
        nested = schema.dump_fields[name].inner.schema  # type: ignore[attr-defined]
        assert set(body[name][0]) == set(nested.dump_fields), name
    assert set(body["leader"]) == set(schema.dump_fields["leader"].schema.dump_fields)  # type: ignore[attr-defined]
    assert body["leader"]["expires_at"] == "2026-12-02T10:00:01.250000Z"
