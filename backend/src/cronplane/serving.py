"""``cronplane serve``: gunicorn in-process, one execution runner per worker process.

The runner starts in gunicorn's ``post_fork`` hook, i.e. in each worker after the fork, never in
the master and never at import; a thread started before fork would not exist in the children.
"""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import sys
import tempfile
import time
from typing import Any

from gunicorn import util as gunicorn_util
from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter
from gunicorn.glogging import Logger as _GunicornBaseLogger
from gunicorn.workers.gthread import ThreadWorker

from cronplane.config import Settings
from cronplane.lifecycle import Shutdown, drain_limit, drain_timeout, is_second_stop
from cronplane.management.bootstrap import CREATE_FIRST_ACCOUNT, FirstRun

log = logging.getLogger("cronplane.serve")


class GunicornLogger(_GunicornBaseLogger):  # type: ignore[misc]
    """gunicorn's logger writing through our root handler, so its lines share our format."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for logger in (self.error_log, self.access_log):
            logger.handlers[:] = []
            logger.propagate = True


def write_problem(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's own error answers (a request line over its limit → 414, a malformed request
    → 400, 431 for headers) as problem+json like every other error, not its HTML page."""
    from cronplane.api.problems import PROBLEM_TYPE_BASE

    body = json.dumps({"type": PROBLEM_TYPE_BASE + reason.lower().replace(" ", "-"),
                       "title": reason, "status": status_int,
                       "detail": mesg or reason}).encode()
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n"
            "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\r\n").encode("latin1")
    gunicorn_util.write_nonblock(sock, head + body)


class ProblemThreadWorker(ThreadWorker):  # type: ignore[misc]
    """gunicorn's gthread worker whose own error pages are problem+json (``write_problem``)."""

    def init_process(self) -> None:
        # gunicorn writes those pages with util.write_error and offers no hook for them.
        gunicorn_util.write_error = write_problem
        super().init_process()


class _Arbiter(Arbiter):  # type: ignore[misc]
    """gunicorn's master with the contract's signals: SIGINT (Ctrl-C, ``make run``) drains like
    SIGTERM instead of gunicorn's quick shutdown, and an operator's second SIGTERM or SIGINT
    during the drain is the quick shutdown (SIGQUIT to the workers, which exit at once; the
    master then exits 128 + the signal). The master alone judges what is a second signal
    (``lifecycle.is_second_stop``): the same stop delivered twice, by the process group and by a
    parent such as make, still drains."""

    stopping_since: float | None = None
    quick_exit_status = 0

    def signal(self, sig: int, frame: Any) -> None:
        if sig in (signal.SIGTERM, signal.SIGINT):
            now = time.monotonic()
            if self.stopping_since is None:
                self.stopping_since = now
            elif not is_second_stop(self.stopping_since, now):
                return  # the first stop again; the workers were (or will be) told once
            else:
                self.quick_exit_status = 128 + sig
                sig = signal.SIGQUIT
        super().signal(sig, frame)

    def handle_int(self) -> None:
        self.handle_term()

    def halt(self, reason: str | None = None, exit_status: int = 0) -> None:
        try:
            super().halt(reason, exit_status)
        except SystemExit as exc:
            # gunicorn exits 0 after its quick shutdown; an interrupted drain is not a clean stop.
            if not exc.code and self.quick_exit_status:
                raise SystemExit(self.quick_exit_status) from None
            raise


class _Gunicorn(BaseApplication):  # type: ignore[misc]
    def __init__(self, settings: Settings, database_url: str, first_run: FirstRun) -> None:
        self.settings = settings
        self.database_url = database_url
        self.first_run = first_run
        self.banner_shown = False
        self.runner: Any = None
        super().__init__()

    def load_config(self) -> None:
        s = self.settings
        config = {
            "bind": f"{s.host}:{s.port}",
            "workers": s.http_workers,
            "threads": s.http_threads,
            "worker_class": ProblemThreadWorker,
            "timeout": 60,
            # The master waits this long for a draining worker before SIGKILL: above the grace.
            "graceful_timeout": math.ceil(drain_limit(s.shutdown_grace_seconds)),
            "keepalive": 5,
            "accesslog": None,
            "logger_class": GunicornLogger,
            # Several cronplane servers may share a host (tests, scale-out): no shared control socket.
            "control_socket_disable": True,
            "post_fork": self._post_fork,
            "worker_exit": self._worker_exit,
            "pre_fork": self._pre_fork,
            "post_worker_init": self._post_worker_init,
            "child_exit": self._child_exit,
        }
        for key, value in config.items():
            self.cfg.set(key, value)

    def _pre_fork(self, _server: Any, worker: Any) -> None:
        # In the master: only the first worker ever forked prints the banner (not restarts).
        worker.cronplane_banner = not self.banner_shown
        self.banner_shown = True

    def _post_worker_init(self, worker: Any) -> None:
        # Printed once the first worker serves, after the start-up lines, so it is what a
        # person sees last.
        if getattr(worker, "cronplane_banner", False):
            print(banner(self.settings, self.first_run), flush=True)
        # Replaces gunicorn's worker handlers (installed just before this hook): the drain starts
        # on the signal, not after the request loop has let its kept-alive connections linger
        # (worker_exit). A stop signalled to the process group (Ctrl-C, `kill -TERM -PGID`,
        # systemd's control-group kill) reaches the workers as well as the master: the worker
        # leaves SIGINT to the master, which relays a stop as SIGTERM and an operator's second
        # one as SIGQUIT, so a repeated SIGTERM here (the group's and the master's) only drains.
        runner = self.runner
        timeout = drain_timeout(self.settings.shutdown_grace_seconds)

        def stop_accepting() -> None:
            worker.alive = False

        shutdown = Shutdown(lambda: runner is not None and runner.stop(timeout=timeout),
                            before=stop_accepting, repeat_exits=False)
        shutdown.install(graceful=(signal.SIGTERM,))
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    def _post_fork(self, _server: Any, _worker: Any) -> None:
        from cronplane.observability.logging import configure_logging

        configure_logging(self.settings.log_level, self.settings.log_format)
        from cronplane.observability import tracing

        tracing.configure()  # after the fork: the exporter's thread lives in the worker
        if not self.settings.execution:
            return
        from cronplane.execution.plane import build_plane
        from cronplane.execution.runner import ExecutionRunner
        from cronplane.storage.database import Database

        db = Database(self.database_url, application_name="cronplane-serve-exec",
                      pool_size=max(4, self.settings.worker_concurrency + 4),
                      direct_url=self.settings.direct_database_url)
        self.runner = ExecutionRunner(build_plane(self.settings, db, kind="serve"))
        self.runner.start()

    def _child_exit(self, _server: Any, worker: Any) -> None:
        try:
            from prometheus_client import multiprocess
        except ImportError:  # pragma: no cover
            return
        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]

    def _worker_exit(self, _server: Any, _worker: Any) -> None:
        # Waits for a drain the signal started (the runner's lock), or drains now (max-requests
        # restart, a worker that died).
        if self.runner is not None:
            self.runner.stop(timeout=drain_timeout(self.settings.shutdown_grace_seconds))
        from cronplane.observability import tracing

        tracing.shutdown()

    def load(self) -> Any:
        from cronplane.api.app import create_app

        return create_app(self.settings, database_url=self.database_url)


def banner(settings: Settings, first_run: FirstRun) -> str:
    """URL, how to sign in, where data lives, how to stop; the first-run password in a box."""
    url = f"http://{settings.host}:{settings.port}/"
    lines = [f"cronplane: serving on {url}"]
    if first_run.password:
        inner = [
            "First run: an administrator account was created.",
            "",
            f"  Console:   {url}",
            f"  Username:  {first_run.username}",
            f"  Password:  {first_run.password}",
            "",
            "This password is shown once. It is also kept in",
            f"  {first_run.password_file}",
            "until you change it (Account → Change password).",
        ]
        width = max(len(line) for line in inner)
        lines += ["", "┌" + "─" * (width + 2) + "┐"]
        lines += [f"│ {line.ljust(width)} │" for line in inner]
        lines += ["└" + "─" * (width + 2) + "┘"]
        sign_in = f"as {first_run.username} with the password above"
    elif first_run.needs_account:
        sign_in = ("nobody can yet: no account exists and CRONPLANE_ENV=production creates none. "
                   f"Create one with: {CREATE_FIRST_ACCOUNT}")
    elif first_run.password_file:
        sign_in = f"as admin with the password in {first_run.password_file}"
    else:
        sign_in = "with your cronplane account"
    data = (f"{settings.data_dir.resolve()} (embedded Postgres in {settings.pg_dir.resolve()})"
            if settings.embedded_database else "the database at DATABASE_URL")
    lines += ["",
              f"  Console:   {url}",
              f"  Sign in:   {sign_in}",
              f"  API docs:  {url}api/docs",
              f"  Data:      {data}",
              "  Stop:      Ctrl-C (or SIGTERM); running jobs get the shutdown grace period",
              ""]
    return "\n".join(lines)


def run_gunicorn(settings: Settings, database_url: str, first_run: FirstRun | None = None) -> None:
    # Metrics from every gunicorn worker are aggregated through files in this directory; it must
    # exist before prometheus_client is first imported in any process.
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="cronplane-metrics-")
    app = _Gunicorn(settings, database_url, first_run or FirstRun())
    try:
        _Arbiter(app).run()
    except RuntimeError as exc:
        print(f"\nError: {exc}\n", file=sys.stderr, flush=True)
        sys.exit(1)
