"""The ranges every plane checks: the storage CHECKs, the API schemas and management validation
all read them from here, so a limit is changed in one place."""

from __future__ import annotations

PRIORITY_RANGE = (-100, 100)
MAX_ATTEMPTS_RANGE = (1, 100)
TIMEOUT_RANGE = (1, 86400)  # seconds a handler may run
BIGINT_MAX = 2**63 - 1  # ids are Postgres bigint: a larger one names nothing and must not reach SQL
OUTPUT_KEEP_BYTES = 1 << 20  # an attempt's output: its last 1 MiB is kept
