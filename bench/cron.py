"""Cron matcher speed: ``next_after`` for a burst of a thousand schedules (Europe/Berlin, on a DST
change). Target: under 1 ms per call. Moved here from the unit tests, where a wall-clock bound
flaked on a busy two-core host (performance targets live in benchmarks, not in timed tests)."""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from cronplane.domain.cron import CronExpression

TARGET_SECONDS = 0.001


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench cron")
    parser.add_argument("--calls", type=int, default=10_000)
    args = parser.parse_args(argv)
    berlin = ZoneInfo("Europe/Berlin")
    expressions = [CronExpression.parse(text) for text in
                   ("0 30 9 * * MON-FRI", "*/15 * * * * *", "0 0 0 L * *", "0 0 12 29 2 *")]
    after = datetime(2024, 10, 26, 23, 59, 59, tzinfo=UTC)
    for expression in expressions:  # warm the per-zone transition cache
        expression.next_after(after, berlin)
    started = time.perf_counter()
    for index in range(args.calls):
        expressions[index % len(expressions)].next_after(after, berlin)
    per_call = (time.perf_counter() - started) / args.calls
    verdict = "ok" if per_call < TARGET_SECONDS else "SLOWER THAN TARGET"
    print(f"cron next_after: {per_call * 1e6:.0f} µs per call over {args.calls} calls "
          f"(target < {TARGET_SECONDS * 1e6:.0f} µs): {verdict}")
    return 0 if per_call < TARGET_SECONDS else 1
