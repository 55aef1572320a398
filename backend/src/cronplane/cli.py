"""The ``cronplane`` command: serve, worker, migrate, create-user, openapi; and against a running
server (``--url``/``--token``): apply and export (schedules as code), jobs, schedules, usage.

Every failure a person can fix (bad configuration, unreachable database, migrations behind) is
one line on stderr and an exit code from ``cli_output`` (2 usage or configuration, 3 the database
or server unreachable or not ready, 1 refused), never a traceback. Every command takes
``--output table|json`` (``cli_output``); ``export`` and ``openapi`` write documents: their
``-o/--output`` is the FILE and ``--format`` chooses the document.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

import click

from cronplane.cli_output import (
    EXIT_REFUSED,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    JSON,
    emit,
    fail,
    fail_api,
    output_option,
    timeout_option,
)
from cronplane.config import ConfigError, Settings

log = logging.getLogger("cronplane.cli")

EXIT_CONFIG = EXIT_USAGE
EXIT_DATABASE = EXIT_UNAVAILABLE
# A schema missing or behind: the database cannot serve this version (3, as unreachable).
EXIT_SCHEMA = EXIT_UNAVAILABLE


def load_settings() -> Settings:
    try:
        return Settings.from_env()
    except ConfigError as exc:
        fail(str(exc), EXIT_CONFIG)


def resolve_database(settings: Settings) -> str:
    """The database URL to use: ``DATABASE_URL``, or the embedded server (started if needed)."""
    if settings.database_url:
        return settings.database_url
    from cronplane.storage.embedded import ensure_app_database

    embedded = _embedded(settings)
    try:
        return ensure_app_database(embedded)
    except Exception as exc:  # noqa: BLE001 - any failure becomes one line for the operator
        fail(f"could not prepare the embedded Postgres in {settings.pg_dir}: {exc}", EXIT_DATABASE)


def resolve_migration_database(settings: Settings) -> tuple[str, str]:
    """(owner URL, runtime URL) for ``cronplane migrate``: ``CRONPLANE_MIGRATION_DATABASE_URL``
    (default ``DATABASE_URL``), or the embedded server's owner role."""
    runtime = resolve_database(settings)
    if settings.migration_database_url:
        return settings.migration_database_url, runtime
    if settings.database_url:
        # The migration lock is a session's: never through a transaction-mode pooler.
        return settings.direct_database_url or settings.database_url, runtime
    from cronplane.storage.embedded import owner_uri

    return owner_uri(_embedded(settings)), runtime


def _embedded(settings: Settings) -> Any:
    from cronplane.storage.embedded import start_embedded

    try:
        return start_embedded(settings.pg_dir, stop_on_exit=True)
    except Exception as exc:  # noqa: BLE001 - any failure becomes one line for the operator
        fail(f"could not start the embedded Postgres in {settings.pg_dir}: {exc}", EXIT_DATABASE)


def check_database(url: str, *, require_current_schema: bool,
                   wait_seconds: float = 0.0) -> None:
    """Exit with one line unless the database answers (and, if required, is at this version's
    head). A schema missing or behind is waited for up to ``wait_seconds`` (a ``migrate`` started
    beside this process), saying so once; a schema this version does not know is not."""
    from cronplane.storage import migrator

    deadline = time.monotonic() + wait_seconds
    said = False
    while True:
        try:
            # Until `migrate` has granted the runtime role its privileges (right after the
            # last migration) the schema is not ready for it either.
            state, may_write = migrator.startup_state(url)
            ready = state.up_to_date and may_write
        except Exception as exc:  # noqa: BLE001 - any failure becomes one line for the operator
            if not (require_current_schema and migrator.not_granted_yet(exc)):
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() \
                    else type(exc).__name__
                fail(f"cannot reach the database ({_redact(url)}): {reason}", EXIT_DATABASE)
            state, ready = migrator.SchemaState(current=None, head=migrator.head_revision()), False
        if not require_current_schema or ready:
            return
        behind = f"database schema is at {state.current or 'nothing'} but this version needs " \
                 f"{state.head}"
        if state.up_to_date:
            behind = "the database's privileges for this role are not granted yet"
        if not migrator.is_known_revision(state.current) or time.monotonic() >= deadline:
            fail(f"{behind}: run `cronplane migrate`", EXIT_SCHEMA)
        if not said:
            click.echo(f"cronplane: {behind}; waiting up to {wait_seconds:g} s for `cronplane "
                       "migrate` (CRONPLANE_STARTUP_WAIT_SECONDS)", err=True)
            said = True
        time.sleep(min(1.0, max(0.05, deadline - time.monotonic())))


def _redact(url: str) -> str:
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in creds else f"{scheme}://{user}@{host}"


# The commands against a running server (``--url``), imported when one is named or listed:
# ``worker`` and ``serve`` do not pay for the HTTP client's import (requests, YAML, its models),
# which was a tenth of a worker's start-up CPU before its first claim (issue 43).
_REMOTE_GROUPS = ("batches", "jobs", "schedules", "usage")


class _Commands(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        _remote_groups()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in _REMOTE_GROUPS:
            _remote_groups()
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands)
@click.version_option(package_name="cronplane")
def main() -> None:
    """cronplane: a secure control plane for scheduled and ad-hoc work."""
    from cronplane.observability.logging import configure_logging

    try:
        settings = Settings.from_env()
        level, log_format = settings.log_level, settings.log_format
    except ConfigError:
        level, log_format = "INFO", "auto"  # the command itself reports the bad variable
    configure_logging(level, log_format)


@main.command()
@output_option
def migrate(output: str) -> None:
    """Apply database migrations up to this version's head."""
    settings = load_settings()
    owner_url, runtime_url = resolve_migration_database(settings)
    check_database(owner_url, require_current_schema=False)
    from cronplane.storage import migrator

    try:
        runtime_role = migrator.current_role(runtime_url)
        # The key attests what a migration changes in the sealed audit trail (0039, ADR 0035).
        migrator.upgrade(owner_url, runtime_role=runtime_role,
                         audit_keyring=settings.with_audit_key().audit_keyring())
    except Exception as exc:  # noqa: BLE001 - any failure becomes one line for the operator
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        fail(f"migration failed as {_redact(owner_url)}: {reason} (migrations run as the schema "
             "owner: CRONPLANE_MIGRATION_DATABASE_URL)", EXIT_DATABASE)
    state = migrator.schema_state(owner_url)
    owner = migrator.current_role(owner_url)
    emit({"revision": state.current, "owner_role": owner, "runtime_role": runtime_role},
         f"cronplane: database at migration {state.current} (owner {owner}, runtime role "
         f"{runtime_role})")


def _json_logs(settings: Settings, output: str) -> None:
    """``--output json`` on a long-running process: its log lines are JSON objects."""
    if output == JSON:
        from cronplane.observability.logging import configure_logging

        configure_logging(settings.log_level, "json")


@main.command()
@output_option
def serve(output: str) -> None:
    """HTTP API and console (gunicorn), plus the execution plane unless CRONPLANE_EXECUTION=off.
    --output json: log lines as JSON (as CRONPLANE_LOG_FORMAT=json)."""
    settings = load_settings().with_secret().with_audit_key()
    _json_logs(settings, output)
    url = resolve_database(settings)
    check_database(url, require_current_schema=True, wait_seconds=settings.startup_wait_seconds)
    first_run = bootstrap(settings, url)
    from cronplane.serving import run_gunicorn

    run_gunicorn(settings, url, first_run)


@main.command()
@output_option
def worker(output: str) -> None:
    """The execution plane alone (no API): worker, watchdog, scheduler when elected leader.
    --output json: log lines as JSON (as CRONPLANE_LOG_FORMAT=json)."""
    settings = load_settings().with_audit_key()
    _json_logs(settings, output)
    url = resolve_database(settings)
    check_database(url, require_current_schema=True, wait_seconds=settings.startup_wait_seconds)
    from cronplane.execution.plane import build_plane
    from cronplane.execution.runner import ExecutionRunner
    from cronplane.storage.database import Database

    db = Database(url, application_name="cronplane-worker",
                  pool_size=max(4, settings.worker_concurrency + 4),
                  direct_url=settings.direct_database_url)
    from cronplane.observability import tracing

    tracing.configure()
    runner = ExecutionRunner(build_plane(settings, db, kind="worker"))
    from cronplane.lifecycle import Shutdown, drain_limit, drain_timeout

    timeout = drain_timeout(settings.shutdown_grace_seconds)
    shutdown = Shutdown(lambda: runner.stop(timeout=timeout),
                        limit=drain_limit(settings.shutdown_grace_seconds))
    shutdown.install()
    from cronplane.observability.probe_server import ProbeServer

    probe = ProbeServer(settings.host, settings.port, metrics_token=settings.metrics_token,
                        production=settings.production)
    try:
        probe.start()
        where = f"/healthz and /metrics on http://{settings.host}:{settings.port}/"
    except OSError as exc:
        # Several workers on one host (or beside `serve`) share the default port; the probe is
        # for orchestrators, where each worker has its own network namespace. Work goes on.
        where = (f"no /healthz or /metrics: {settings.host}:{settings.port} is taken "
                 f"({exc.strerror or exc}; set CRONPLANE_PORT)")
    runner.start()
    if output == JSON:
        import json

        click.echo(json.dumps({"event": "worker running", "worker_id": runner.identity.id,
                               "probe": where}), err=True)
    else:
        click.echo(f"cronplane: worker {runner.identity.id} running; {where}", err=True)
    shutdown.drained.wait()
    runner.stop(timeout=timeout)  # a signal before start
    tracing.shutdown()
    probe.stop()
    db.close()


@main.command("create-user")
@click.argument("username")
@click.option("--role", required=True, type=click.Choice(["VIEWER", "OPERATOR", "ADMIN"],
                                                         case_sensitive=False))
@click.option("--password-file", type=click.File("r"), help="Read the password from this file.")
@output_option
def create_user(username: str, role: str, password_file: Any, output: str) -> None:
    """Create a user; the password comes from stdin or --password-file."""
    settings = load_settings()
    url = resolve_database(settings)
    check_database(url, require_current_schema=True)
    source = password_file or sys.stdin
    password = source.readline().rstrip("\r\n")
    try:
        from cronplane.management.users import create_user_cli
    except ImportError:
        fail("user management is not available in this build", EXIT_CONFIG)
    from cronplane.management.context import ManagementContext
    from cronplane.management.errors import ManagementError

    ctx = ManagementContext.build(settings, url)
    try:
        user = create_user_cli(ctx, username=username, password=password, role=role.upper())
    except ManagementError as exc:
        fail(exc.detail, EXIT_REFUSED)
    finally:
        ctx.db.close()  # and its credential cache, which the new user's commit started
    emit({"id": user.id, "username": user.username, "role": str(user.role)},
         f"cronplane: created user {user.username} ({user.role})")


@main.command("seed-demo")
@click.option("--day", is_flag=True, required=True,
              help="A real-looking day: 3 projects, 13 schedules, ~1,000 jobs with failures, "
                   "broken channels, a paused queue.")
@output_option
def seed_demo(day: bool, output: str) -> None:
    """Fill this installation's database with demo data (once; refuses a seeded database)."""
    settings = load_settings()
    url = resolve_database(settings)
    check_database(url, require_current_schema=True)
    from cronplane.management.context import ManagementContext
    from cronplane.management.demo_day import AlreadySeeded, seed_day

    ctx = ManagementContext.build(settings, url)
    try:
        report = seed_day(ctx)
    except AlreadySeeded as exc:
        emit({"seeded": False, "detail": exc.detail}, f"cronplane: {exc.detail}; nothing changed")
        return
    finally:
        ctx.db.close()
    import dataclasses

    emit({"seeded": True, **dataclasses.asdict(report)},
         f"cronplane: seeded a day: {report.projects} projects added, {report.schedules} "
         f"schedules, {report.channels} unreachable channels, {report.jobs} jobs "
         f"({report.failed_jobs} failed, {report.deliveries} notification deliveries), "
         "queue default/webhooks paused")


@main.command("redact-payloads")
@click.option("--batch-size", default=2000, show_default=True, type=click.IntRange(1, 100_000),
              help="Jobs per batch; each batch is one short transaction.")
@click.option("--settle-seconds", default=60.0, show_default=True, type=click.FloatRange(0),
              help="Stop before jobs younger than this (their inserts may still be in flight).")
@click.option("--status", "status_only", is_flag=True,
              help="Print where the pass is and change nothing.")
@output_option
def redact_payloads(batch_size: int, settle_seconds: float, status_only: bool,
                    output: str) -> None:
    """Redact literal credentials in jobs' stored payloads, batch by batch, until the walk has
    caught up (the leader does the same in the background; the two take turns). Safe to stop
    and run again: it resumes after the last committed batch. ADR 0035, docs/operations.md."""
    settings = load_settings()
    url = resolve_database(settings)
    check_database(url, require_current_schema=True)
    from cronplane.storage.database import Database
    from cronplane.storage.redaction_store import PayloadRedactionStore

    db = Database(url, application_name="cronplane-redact-payloads", pool_size=1)
    scanned = redacted = batches = 0
    try:
        store = PayloadRedactionStore(db)
        while not status_only:
            step = store.step(batch_size, settle_seconds)
            scanned, redacted, batches = scanned + step.scanned, redacted + step.redacted, batches + 1
            if output != JSON and step.scanned and batches % 50 == 0:
                click.echo(f"cronplane: walked through job {step.cursor} ({scanned} jobs, "
                           f"{redacted} redacted)", err=True)
            if step.caught_up:
                break
        status = store.status().as_dict()
    except Exception as exc:  # noqa: BLE001 - any failure becomes one line for the operator
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        fail(f"redact-payloads stopped: {reason} (run it again to resume after the last "
             "committed batch)", EXIT_DATABASE)
    finally:
        db.close()
    if status_only:
        emit({"status": status}, f"cronplane: payload redaction walked through job "
             f"{status['cursor']} of {status['last_job_id']}; {status['redacted']} redacted in "
             f"all, {status['held']} unfinished held")
        return
    emit({"scanned": scanned, "redacted": redacted, "status": status},
         f"cronplane: walked {scanned} jobs, redacted {redacted} payloads; caught up through job "
         f"{status['cursor']} ({status['held']} unfinished jobs held until they finish; "
         f"{status['redacted']} redacted in all)")


def write_document(text: str, path: str | None) -> None:
    """A document command's result: to FILE, or stdout."""
    if not path:
        click.echo(text, nl=False)
        return
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}", EXIT_USAGE)


DOCUMENT_FILE_HELP = ("Write the document to this FILE (a document command: its -o/--output "
                      "names a file, --format chooses the document).")


@main.command()
@click.option("--output", "-o", type=click.Path(dir_okay=False), help=DOCUMENT_FILE_HELP)
@click.option("--format", "fmt", type=click.Choice(["json", "yaml"]), default="json",
              show_default=True, help="The document's format.")
def openapi(output: str | None, fmt: str) -> None:
    """Print the OpenAPI document (no database needed)."""
    import json

    from cronplane.api.app import create_app

    settings = load_settings()
    app = create_app(settings, database_url="postgresql://unused@localhost/unused")
    with app.app_context():
        spec = app.extensions["cronplane.api"].spec.to_dict()
    text = json.dumps(spec, indent=2, sort_keys=True) + "\n"
    if fmt == "yaml":
        import yaml

        text = yaml.safe_dump(spec, sort_keys=True, allow_unicode=True)
    write_document(text, output)


@main.group()
def audit() -> None:
    """The audit trail."""


EXIT_TAMPERED = 1


@audit.command("verify")
@click.option("--anchor", "anchor_files", multiple=True,
              type=click.Path(exists=True, dir_okay=False),
              help="A checkpoint the trail must still reach: another host's audit-anchor.json, "
                   "or log lines (JSON) with audit_checkpoint. Repeatable.")
@click.option("--json", "as_json", is_flag=True, help="The same as --output json (version 2).")
@output_option
def audit_verify(anchor_files: tuple[str, ...], as_json: bool, output: str) -> None:
    """Check the audit trail against its HMAC chain and checkpoints, offline.

    Exit 0: intact. 1: tampering found (first bad event, or the newest events deleted).
    2: configuration (no audit key, unreadable anchor). 3: database unreachable or schema behind.
    """
    as_json = as_json or output == JSON
    settings = load_settings()
    if not settings.production:
        settings = settings.with_audit_key()
    anchors = []
    from cronplane.storage.audit_store import read_checkpoints

    for path in anchor_files:
        try:
            anchors.extend(read_checkpoints(Path(path)))
        except (OSError, ValueError) as exc:
            fail(str(exc), EXIT_CONFIG)
    url = resolve_database(settings)
    check_database(url, require_current_schema=True)
    from cronplane.management.audit_log import AuditKeyMissing, verify
    from cronplane.management.context import ManagementContext

    ctx = ManagementContext.build(settings, url)
    try:
        result = verify(ctx, anchors=anchors)
    except AuditKeyMissing as exc:
        fail(exc.detail, EXIT_CONFIG)
    finally:
        ctx.db.close()
    if as_json:
        import dataclasses
        import json

        click.echo(json.dumps(dataclasses.asdict(result), indent=2))
    if not result.ok:
        if not as_json:
            for reason in result.reasons:
                click.echo(f"cronplane: {reason}", err=True)
        what = (f"audit chain broken at event {result.first_bad_id}"
                if result.first_bad_id is not None else "audit trail tampered with")
        if result.truncated:
            what += f"; truncated: the newest events after {result.head_id} were deleted"
        fail(f"{what} ({result.checked} events checked)", EXIT_TAMPERED)
    if not as_json:
        sealed = (f"sealed through {result.sealed_id}" if result.sealed_id is not None
                  else "none sealed yet")
        anchored = f", anchored at {result.anchor_id}" if result.anchor_id is not None else ""
        click.echo(f"cronplane: audit chain ok ({result.checked} events checked; {sealed}"
                   f"{anchored})")


EXIT_FILE = EXIT_USAGE


def _remote(url: str | None, token: str | None, timeout: float) -> Any:
    from cronplane.cli_output import client_from

    return client_from(url, token, timeout)


REMOTE_OPTIONS = [
    click.option("--url", envvar="CRONPLANE_URL", help="Server URL (CRONPLANE_URL)."),
    click.option("--token", envvar="CRONPLANE_TOKEN", help="API token (CRONPLANE_TOKEN)."),
    click.option("--project", default=None, help="Project slug (default: the file's, or default)."),
    timeout_option,
]


def remote_options(func: Any) -> Any:
    for option in reversed(REMOTE_OPTIONS):
        func = option(func)
    return func


@main.command()
@click.option("-f", "--file", "path", required=True, type=click.Path(dir_okay=False, exists=True),
              help="The schedules file (YAML).")
@click.option("--prune", is_flag=True, help="Delete schedules of the project the file does not name.")
@click.option("--dry-run", is_flag=True, help="Print the diff, change nothing.")
@remote_options
@output_option
def apply(path: str, *, prune: bool, dry_run: bool, url: str | None, token: str | None,
          project: str | None, timeout: float, output: str) -> None:
    """Make the server's schedules match FILE: create, update (and with --prune delete).

    Changing schedules needs the ADMIN role in the project: with less, nothing is sent and the
    exit code is 1, a dry run's included (after its diff).

    --output json: {project, file, dry_run, applied, counts, changes: [{kind, name,
    schedule_id, changes?: {field: [now, wanted]}, schedule?}], refusal (dry run: why the real
    run would be refused, or null)}."""
    from cronplane.client import schedules_as_code as sac
    from cronplane.client.http import ApiError

    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        desired = sac.load(text, path, project)
    except sac.FileError as exc:
        fail(str(exc), EXIT_FILE)
    client = _remote(url, token, timeout)
    try:
        changes = sac.plan(desired, client.get_all("/schedules"), prune=prune)
        counts = {kind: sum(1 for c in changes if c.kind == kind)
                  for kind in ("create", "update", "delete")}
        result: dict[str, Any] = {"project": desired.project, "file": path, "dry_run": dry_run,
                                  "applied": False, "counts": counts,
                                  "changes": [sac.change_json(c) for c in changes]}
        if not changes:
            emit(result, f"no changes: {len(desired.schedules)} schedule(s) in project "
                         f"{desired.project} already match {path}")
            return
        lines = sac.render(changes)
        summary = ", ".join(f"{n} to {kind}" for kind, n in counts.items() if n)
        # Asked before any change, so that neither a dry run passes nor a real run prints
        # "+ create" lines it then never applies (review 2026-12-05, first hour step 9).
        refusal = sac.role_refusal(client, desired.project)
        if dry_run:
            emit({**result, "refusal": refusal},
                 "\n".join([*lines, f"dry run: {summary}; nothing changed"]))
            if refusal:
                fail(f"the real run would be refused: {refusal}", EXIT_REFUSED)
            return
        if refusal:
            fail(refusal, EXIT_REFUSED)
        if output != JSON:
            # The diff first: a refusal half-way leaves it on screen above the reason.
            click.echo("\n".join(lines))
        sac.execute(client, changes)
    except ApiError as exc:
        fail_api(exc)
    done = ", ".join(f"{n} {kind}d" for kind, n in counts.items() if n)
    emit({**result, "applied": True}, f"applied: {done}")


@main.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False), help=DOCUMENT_FILE_HELP)
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True,
              help="yaml: the file `apply` reads; json: the same document as JSON (for scripts; "
                   "`apply` reads it too).")
@remote_options
def export(output: str | None, *, fmt: str, url: str | None, token: str | None,
           project: str | None, timeout: float) -> None:
    """Write the project's schedules in the format `cronplane apply` reads."""
    from cronplane.client import schedules_as_code as sac
    from cronplane.client.http import ApiError

    client = _remote(url, token, timeout)
    try:
        text = sac.export(client.get_all("/schedules"), project, fmt)
    except ApiError as exc:
        fail_api(exc)
    write_document(text, output)


def bootstrap(settings: Settings, url: str) -> Any:
    """Create the first account (or the configured admin) and demo personas (idempotent)."""
    from cronplane.management.bootstrap import bootstrap_accounts
    from cronplane.management.context import ManagementContext

    ctx = ManagementContext.build(settings, url)
    try:
        return bootstrap_accounts(ctx)
    finally:
        ctx.db.close()


def _remote_groups() -> None:
    if "jobs" in main.commands:
        return
    from cronplane.client.batch_commands import batches
    from cronplane.client.commands import jobs, schedules, usage

    main.add_command(batches)
    main.add_command(jobs)
    main.add_command(schedules)
    main.add_command(usage)


if __name__ == "__main__":  # pragma: no cover
    main()
