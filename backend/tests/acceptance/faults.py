"""What the fault-injection scenarios share (one ``test_fault_*.py`` file per scenario, so each
runs on its own xdist worker): the cluster fixture, the queue processes' settings and the report.

Each scenario breaks something on purpose with real processes and a real Postgres and asserts the
invariant that must hold anyway (not just "no crash"). Each runs a short version in ``make test``
and a long one (``@pytest.mark.chaos``, 20 rounds) in ``make chaos``. Measured figures are printed
(``-s``) and summarised in docs/what-breaks-and-what-holds.md.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance.processes import Cluster

LEASE = 2.0  # attempt lease: a killed worker's attempt is reclaimed within lease + watchdog
QUEUE_ENV = {"CRONPLANE_ATTEMPT_LEASE_SECONDS": str(LEASE), "CRONPLANE_WORKER_CONCURRENCY": "4",
             "CRONPLANE_LOG_LEVEL": "WARNING"}


@pytest.fixture
def cluster(fresh_database_url: str, tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(fresh_database_url, tmp_path)
    yield c
    c.stop_all()


def report(title: str, **figures: Any) -> None:
    print(f"\n[fault-injection] {title}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


def spread(values: list[float]) -> str:
    if not values:
        return "n/a"
    return (f"median {statistics.median(values):.2f}s, max {max(values):.2f}s "
            f"(n={len(values)})")
