"""A worker's start-up imports only what it runs (issue 43: start-up is part of every drain a
user times): no SQLAlchemy or Alembic (the execution plane is psycopg only; the ORM is imported
by the first ORM session, Alembic by `migrate`), no Flask or marshmallow (the API's), no
OpenTelemetry unless tracing is configured, no jsonschema (payloads are validated at
submission), no urllib3 or smtplib until a handler sends, and no HTTP client (the CLI's
commands against a server load when named)."""

from __future__ import annotations

import subprocess
import sys

from cronplane.cli_worker_start import WORKER_START_CODE

HEAVY = ("sqlalchemy", "alembic", "flask", "flask_smorest", "marshmallow", "opentelemetry",
         "jsonschema", "urllib3", "smtplib", "requests", "yaml")


def test_the_worker_command_imports_neither_the_orm_nor_the_http_client() -> None:
    # What `cronplane worker` imports before its first claim, in a fresh interpreter.
    code = ("import sys\n"
            f"HEAVY = {HEAVY!r}\n"
            f"{WORKER_START_CODE}"
            "leaked = sorted(m for m in sys.modules\n"
            "                if m.split('.')[0] in HEAVY\n"
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
