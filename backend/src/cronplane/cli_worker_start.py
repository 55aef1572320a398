"""What ``cronplane worker`` (``cli.worker``) imports before its first claim, in one place: the
start-up test holds it free of the ORM and the HTTP layers
(tests/unit/execution/test_worker_start_imports.py) and the bench times it
(bench/worker_start.py). When ``cli.worker`` imports another module before it claims, name it
here."""

from __future__ import annotations

WORKER_START_IMPORTS = (
    "import cronplane.cli",
    "from cronplane.observability.logging import configure_logging",  # --output json
    "from cronplane.storage import migrator",  # check_database
    "from cronplane.execution.plane import build_plane",
    "from cronplane.execution.runner import ExecutionRunner",
    "from cronplane.storage.database import Database",
    "from cronplane.observability import tracing",
    "from cronplane.lifecycle import Shutdown",
    "from cronplane.observability.probe_server import ProbeServer",
    # build_plane loads the handlers (built-ins and entry points) before the first claim.
    "from cronplane.handlers.registry import default_registry",
    "default_registry()",
)

# The imports as one program for a fresh interpreter (``python -c``).
WORKER_START_CODE = "".join(line + "\n" for line in WORKER_START_IMPORTS)
