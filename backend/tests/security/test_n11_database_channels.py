"""Review N11: any database role that could connect read the search index's lexemes through a
SECURITY DEFINER function left executable by PUBLIC, cancelled any running job with a forged
``NOTIFY cronplane_jobs, 'cancel:<id>'``, and made a credential change return before the other
processes had emptied their caches with a forged acknowledgement on ``cronplane_auth_ack``.

Each attack is replayed as in the review, from ``other_app``: a real login role with no privilege
on any cronplane table (only the CONNECT every role has by default), against real Postgres and
the real worker and credential cache."""

from __future__ import annotations

import dataclasses
import secrets
import threading
import time
from collections.abc import Iterator
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from cronplane.config import Settings
from cronplane.domain.roles import Role
from cronplane.execution.plane import Part, build_plane
from cronplane.execution.runner import ExecutionRunner
from cronplane.execution.worker import Worker
from cronplane.management import history, jobs
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.storage import migrator, notify
from cronplane.storage.credential_cache import APPLICATION_NAME
from cronplane.storage.database import Database
from tests.support.accounts import add_user
from tests.support.apps import context, make_app
from tests.support.waiting import wait_until

ALICE = Actor(username="alice", role=Role.OPERATOR, user_id=1)


@pytest.fixture
def other_app(pg, fresh_database_url: str) -> Iterator[str]:
    """The URL of a login role that holds nothing on the database but the default CONNECT."""
    if not pg.split:
        pytest.skip("TEST_DATABASE_URL names one role: no second role to attack from")
    role = f"other_app_{secrets.token_hex(4)}"
    with psycopg.connect(pg.admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
    parts = urlsplit(fresh_database_url)
    host = parts.netloc.rsplit("@", 1)[-1]
    yield urlunsplit(parts._replace(netloc=f"{quote(role)}@{host}"))
    with psycopg.connect(pg.admin_url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                     (role,))
        conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


# -- the SECURITY DEFINER function ---------------------------------------------------------------
def test_a_role_without_cronplanes_grants_cannot_read_the_search_lexemes(
        other_app: str, fresh_database_url: str) -> None:
    with psycopg.connect(other_app, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT count(*) FROM jobs")
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as refused:
            conn.execute("SELECT * FROM jobs_search_lexeme_frequencies()")
    assert "permission denied for function" in str(refused.value)
    # The runtime role keeps the search's statistics.
    with psycopg.connect(fresh_database_url, autocommit=True) as conn:
        conn.execute("SELECT * FROM jobs_search_lexeme_frequencies()").fetchall()


def test_no_security_definer_function_is_executable_by_public(fresh_database_url: str) -> None:
    with psycopg.connect(fresh_database_url) as conn:
        public = conn.execute(
            "SELECT p.oid::regprocedure::text FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = 'public' AND p.prosecdef "
            "AND has_function_privilege('public', p.oid, 'EXECUTE')").fetchall()
        definers = conn.execute(
            "SELECT p.oid::regprocedure::text FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = 'public' AND p.prosecdef ORDER BY 1").fetchall()
    assert public == [], (f"SECURITY DEFINER functions any role may call: {public}; revoke "
                          "EXECUTE from PUBLIC in their migration (docs/database-program.md)")
    assert [d for (d,) in definers] == sorted(migrator.DEFINER_FUNCTIONS), (
        "every SECURITY DEFINER function is granted to the runtime role by name "
        "(storage/migrator.py DEFINER_FUNCTIONS)")


def test_the_migration_keeps_the_function_for_a_runtime_role_granted_before_it(pg) -> None:
    """A process of the previous version keeps searching while 0045 migrates: the runtime role
    granted by an earlier `cronplane migrate` is given EXECUTE by the migration itself."""
    if not pg.split:
        pytest.skip("TEST_DATABASE_URL names one role: no runtime role to grant")
    name = f"cp_n11_{secrets.token_hex(4)}"
    url = pg.create_database(name)
    try:
        migrator.upgrade(pg.owner_url(name), "0044", runtime_role=pg.app_role)
        migrator.upgrade(pg.owner_url(name), "0045")  # no grants after it
        with psycopg.connect(url, autocommit=True) as conn:
            rights = conn.execute(
                "SELECT has_function_privilege('jobs_search_lexeme_frequencies()', 'EXECUTE'), "
                "has_function_privilege('public', 'jobs_search_lexeme_frequencies()', "
                "'EXECUTE')").fetchone()
        assert rights == (True, False)
    finally:
        pg.drop_database(name)


# -- a forged cancel notice ----------------------------------------------------------------------
@pytest.fixture
def plane(fresh_database_url: str, settings: Settings) -> Iterator[
        tuple[ManagementContext, ExecutionRunner]]:
    db = Database(fresh_database_url, application_name="cronplane-test-worker", pool_size=12)
    tuned = dataclasses.replace(settings, worker_concurrency=2, attempt_lease_seconds=2,
                                shutdown_grace_seconds=0.5)
    runner = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE}))
    runner.start()
    yield ManagementContext(settings=tuned, db=db), runner
    runner.stop(timeout=10)
    db.close()


def _status(ctx: ManagementContext, job_id: int) -> str:
    return history.get_job(ctx, Actor.system(), job_id).job.status


def test_a_forged_cancel_notice_leaves_a_running_job_running_to_success(
        plane, other_app: str) -> None:
    ctx, runner = plane
    worker = runner.plane.worker
    assert isinstance(worker, Worker)
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("sleep", {"seconds": 3}, max_attempts=1)).job
    wait_until(lambda: _status(ctx, job.id) == "RUNNING", message="the job running")
    with psycopg.connect(other_app, autocommit=True) as attacker:
        attacker.execute(sql.SQL("NOTIFY {}, {}").format(
            sql.Identifier(notify.JOBS), sql.Literal(notify.cancel_payload(job.id))))
    wait_until(lambda: worker.cancel_hints_ignored == 1, timeout=5,
               message="the worker hearing the forged notice and ignoring it")
    assert _status(ctx, job.id) == "RUNNING", "a forged notice stopped the handler"
    wait_until(lambda: _status(ctx, job.id) != "RUNNING", timeout=20, message="the job ending")
    detail = history.get_job(ctx, Actor.system(), job.id)
    assert detail.job.status == "SUCCEEDED", detail.job.error
    assert [a.status for a in detail.attempts] == ["SUCCEEDED"]
    with ctx.db.connection() as conn:
        cancels = conn.execute("SELECT count(*) AS n FROM audit_events "
                               "WHERE action = 'job.cancel'").fetchone()["n"]
    assert cancels == 0


# -- a forged acknowledgement --------------------------------------------------------------------
def test_a_forged_acknowledgement_is_not_counted(fresh_database_url: str, other_app: str) -> None:
    app = make_app(fresh_database_url)
    cache = context(app).credentials
    stop = threading.Event()
    forged: list[str] = []
    # A second cronplane process whose listener is slow: the change must wait for it. The forger
    # hears each credential change and acknowledges it in the slow process's place.
    with psycopg.connect(fresh_database_url, autocommit=True,
                         application_name=APPLICATION_NAME) as slow, \
            psycopg.connect(other_app, autocommit=True) as listener, \
            psycopg.connect(other_app, autocommit=True) as sender:
        slow.execute(sql.SQL("LISTEN {}").format(sql.Identifier(notify.AUTH)))
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(notify.AUTH)))

        def forge() -> None:
            while not stop.is_set():
                for heard in listener.notifies(timeout=0.2):
                    sender.execute(sql.SQL("NOTIFY {}, {}").format(
                        sql.Identifier(notify.AUTH_ACK), sql.Literal(heard.payload)))
                    forged.append(heard.payload)
                    break

        thread = threading.Thread(target=forge, daemon=True)
        try:
            cache.start()
            wait_until(lambda: cache.listening, message="the cache's LISTEN connection")
            thread.start()
            started = time.monotonic()
            add_user(app, "VIEWER")  # a credential change: acknowledged before it returns
            elapsed = time.monotonic() - started
            assert forged, "the forger never heard the change"
            wait_until(lambda: cache.acks_not_counted >= 1, timeout=5,
                       message="the cache hearing the forged acknowledgement")
            assert elapsed >= cache.delivery_wait * 0.9, (
                f"the change returned after {elapsed:.2f} s, before the slow process "
                "acknowledged: the forged acknowledgement was counted")
        finally:
            stop.set()
            if thread.is_alive():
                thread.join(5)
            context(app).db.close()
