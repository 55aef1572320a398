"""The CLI as an operator meets it: one line and a non-zero exit for what they can fix."""

from __future__ import annotations

import os
import subprocess
import sys

CLI = [sys.executable, "-m", "cronplane.cli"]


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    full_env.update(env)
    return subprocess.run(CLI + args, env=full_env, capture_output=True, text=True, timeout=60)


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("cronplane:")]


def test_unreachable_database_is_one_line_and_nonzero_exit() -> None:
    result = run(["migrate"], {"DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"})
    assert result.returncode != 0
    lines = _error_lines(result.stderr)
    assert len(lines) == 1 and "cannot reach the database" in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_configuration_names_the_variable() -> None:
    result = run(["worker"], {"CRONPLANE_LEASE_TTL_SECONDS": "-1"})
    assert result.returncode != 0
    assert _error_lines(result.stderr) == [
        "cronplane: CRONPLANE_LEASE_TTL_SECONDS: must be between 1 and 3600, got -1"]


def test_serve_refuses_a_database_whose_migrations_are_behind(pg) -> None:
    name = "cp_behind_" + __import__("secrets").token_hex(3)
    url = pg.create_database(name)
    try:
        result = run(["serve"], {"DATABASE_URL": url, "CRONPLANE_PORT": "18999",
                                 "CRONPLANE_STARTUP_WAIT_SECONDS": "1"})
        assert result.returncode == 3, "schema behind: the database cannot serve this version"
        assert "run `cronplane migrate`" in result.stderr
        # It said once that it waits, then gave up with the one line of version 1.
        assert result.stderr.count("waiting up to 1 s") == 1, result.stderr
    finally:
        pg.drop_database(name)


def test_migrate_then_schema_is_current(pg) -> None:
    name = "cp_cli_" + __import__("secrets").token_hex(3)
    url = pg.create_database(name)
    try:
        result = run(["migrate"], {"DATABASE_URL": url,
                                   "CRONPLANE_MIGRATION_DATABASE_URL": pg.owner_url(name)})
        assert result.returncode == 0, result.stderr
        from cronplane.storage.migrator import schema_state

        assert schema_state(url).up_to_date
    finally:
        pg.drop_database(name)
