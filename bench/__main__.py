"""Benchmarks: ``python -m bench queue|scheduler|api|history|console|…|all [options]`` from the repository
root.

Each area lives in its own module (``bench/queue.py``, ``bench/scheduler.py``, ``bench/api.py``,
``bench/history.py``, ``bench/cron.py``, ``bench/audit.py``, ``bench/output.py``,
``bench/console.py``) with a ``main(argv)``; a module that is missing is reported and skipped,
never fatal to the others.
"""

from __future__ import annotations

import importlib
import sys

AREAS = ("queue", "scheduler", "api", "history", "cron", "audit", "output", "console",
         "drain-api", "fire-burst", "fire-batch", "drain-pgbouncer", "writes", "worker-start",
         "job-cost")


def run(area: str, argv: list[str]) -> int:
    try:
        module = importlib.import_module(f"bench.{area.replace('-', '_')}")
    except ModuleNotFoundError as exc:
        if exc.name in (f"bench.{area.replace('-', '_')}", "bench"):
            print(f"bench: no {area} benchmark in this checkout (bench/{area}.py); skipped")
            return 0
        raise
    result = module.main(argv)
    return int(result or 0)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in (*AREAS, "all"):
        print(__doc__)
        print(f"usage: python -m bench {{{'|'.join(AREAS)}|all}} [options]")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    area, rest = argv[0], argv[1:]
    if area == "all":
        status = 0
        for name in AREAS:
            print(f"\n===== {name} =====", flush=True)
            status = run(name, []) or status
        return status
    return run(area, rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
