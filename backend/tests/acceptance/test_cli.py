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


def _set_revision(pg, url: str, revision: str) -> None:
    import psycopg

    with psycopg.connect(pg.owner_url(url), autocommit=True) as conn:
        conn.execute("UPDATE alembic_version SET version_num = %s", (revision,))


def test_the_worker_waits_for_a_schema_behind_then_refuses_it(pg, make_database,
                                                              tmp_path) -> None:
    # The worker reads alembic_version without Alembic (issue 43): a revision this version knows
    # but is not its head is waited for (a `migrate` may be running), then refused in one line.
    from cronplane.storage import migrator

    head = migrator.head_revision()
    chain = migrator._revision_chain()
    assert head is not None and chain is not None
    behind = chain[head]
    assert behind is not None
    url = make_database()
    _set_revision(pg, url, behind)
    result = run(["worker"], {"DATABASE_URL": url, "CRONPLANE_DATA_DIR": str(tmp_path),
                              "CRONPLANE_STARTUP_WAIT_SECONDS": "1"})
    assert result.returncode == 3, f"a schema behind is refused: {result.stderr}"
    assert result.stderr.count("waiting up to 1 s") == 1, result.stderr
    assert _error_lines(result.stderr)[-1] == (
        f"cronplane: database schema is at {behind} but this version needs {head}: run "
        "`cronplane migrate`"), result.stderr


def test_the_worker_refuses_a_schema_ahead_of_it_without_waiting(pg, make_database,
                                                                 tmp_path) -> None:
    from cronplane.storage import migrator

    url = make_database()
    _set_revision(pg, url, "f0f0f0f0f0f0")  # a newer version's revision, unknown here
    result = run(["worker"], {"DATABASE_URL": url, "CRONPLANE_DATA_DIR": str(tmp_path),
                              "CRONPLANE_STARTUP_WAIT_SECONDS": "30"})
    assert result.returncode == 3, f"a schema ahead is refused: {result.stderr}"
    assert "waiting" not in result.stderr, "waiting cannot bring the code up to a newer schema"
    assert _error_lines(result.stderr) == [
        f"cronplane: database schema is at f0f0f0f0f0f0 but this version needs "
        f"{migrator.head_revision()}: run `cronplane migrate`"], result.stderr


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
