"""A/B of the one insert path moving into SQL (issue 41, migration 0043): the ``insert_jobs``
statement as it was (one CTE statement, prepared) against the call of ``insert_jobs_v1``,
interleaved on one autocommit connection as the group commit runs it; batches of 1 and 50 rows.

    .venv/bin/python -m bench.insert_function URL [REV]   (from the repository root)

URL: a database migrated to 0043 or later (jobs are left in it). REV: the commit whose
``job_insert.sql`` is "before" (default ``0144cc8``, main before the move)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from psycopg.rows import dict_row

from cronplane.storage.connections import connect
from cronplane.storage.job_insert import NewJob, _params
from cronplane.storage.queries import QUERIES, parse

ROUNDS, WARM = 130, 30  # the first rounds pass the plan cache's custom plans


def main(argv: list[str]) -> int:
    url, rev = argv[0], argv[1] if len(argv) > 1 else "0144cc8"
    before = parse(subprocess.run(
        ["git", "show", f"{rev}:backend/src/cronplane/storage/sql/job_insert.sql"],
        check=True, capture_output=True, text=True).stdout)["insert_jobs"]
    after = QUERIES["insert_jobs"]
    conn = connect(url, autocommit=True, row_factory=dict_row)
    for size in (1, 50):
        jobs = [NewJob(handler="noop", payload={"i": i}) for i in range(size)]
        times: dict[str, list[float]] = {"before": [], "after": []}
        for r in range(ROUNDS):
            pair = (("before", before), ("after", after))
            for name, statement in pair if r % 2 else reversed(pair):
                started = time.perf_counter()
                rows = conn.execute(statement, _params(jobs, False), prepare=True).fetchall()
                elapsed = time.perf_counter() - started
                assert len(rows) == size and rows[0]["id"] is not None
                if r >= WARM:
                    times[name].append(elapsed * 1000)
        b, a = statistics.median(times["before"]), statistics.median(times["after"])
        print(f"batch {size:>3}: before {b:.3f} ms  after {a:.3f} ms  after/before {a / b:.2f}"
              f"  (median of {len(times['before'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
