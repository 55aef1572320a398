"""The ranges every plane checks: the storage CHECKs, the API schemas and management validation
all read them from here, so a limit is changed in one place."""

from __future__ import annotations

PRIORITY_RANGE = (-100, 100)
MAX_ATTEMPTS_RANGE = (1, 100)
TIMEOUT_RANGE = (1, 86400)  # seconds a handler may run
BIGINT_MAX = 2**63 - 1  # ids are Postgres bigint: a larger one names nothing and must not reach SQL
# Job defaults, defined once: a handler's spec, a job without its own, and the worker's fallback
# for a job whose handler it does not know all read these.
DEFAULT_TIMEOUT_SECONDS = 300
DEFAULT_MAX_ATTEMPTS = 3
MAX_DEPENDENCIES = 100  # depends_on of one job
MAX_BATCH_JOBS = 1000  # jobs of one POST /batches
MAX_QUEUES_PER_PROJECT = 100  # CRONPLANE_MAX_QUEUES_PER_PROJECT's default (review N15)
OUTPUT_KEEP_BYTES = 1 << 20  # an attempt's output: its last 1 MiB is kept
