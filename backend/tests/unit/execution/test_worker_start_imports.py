"""A worker's start-up imports only what it runs (issue 43: start-up is part of every drain a
user times): no SQLAlchemy (the execution plane is psycopg only; the ORM is imported by the
first ORM session) and no HTTP client (the CLI's commands against a server load when named)."""

from __future__ import annotations

import subprocess
import sys


def test_the_worker_command_imports_neither_the_orm_nor_the_http_client() -> None:
    # What `cronplane worker` imports before its first claim (cli.worker), in a fresh interpreter.
    code = ("import sys\n"
            "import cronplane.cli\n"
            "from cronplane.storage import migrator\n"
            "from cronplane.execution.plane import build_plane\n"
            "from cronplane.execution.runner import ExecutionRunner\n"
            "from cronplane.storage.database import Database\n"
            "from cronplane.observability import tracing\n"
            "from cronplane.lifecycle import Shutdown\n"
            "from cronplane.observability.probe_server import ProbeServer\n"
            "leaked = sorted(m for m in sys.modules\n"
            "                if m.split('.')[0] in ('sqlalchemy', 'alembic', 'requests', 'yaml')\n"
            "                or m.startswith('cronplane.client')\n"
            "                or m.startswith('cronplane.management'))\n"
            "assert not leaked, leaked[:10]\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_the_remote_commands_are_still_listed_and_found() -> None:
    from click.testing import CliRunner

    from cronplane.cli import main

    listed = CliRunner().invoke(main, ["--help"])
    assert listed.exit_code == 0
    for name in ("batches", "jobs", "schedules", "usage", "worker", "serve"):
        assert f"  {name} " in listed.output, listed.output
    assert CliRunner().invoke(main, ["jobs", "--help"]).exit_code == 0
