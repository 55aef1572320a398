"""``cronplane serve``: gunicorn in-process, one execution runner per worker process.

The runner starts in gunicorn's ``post_fork`` hook, i.e. in each worker after the fork, never in
the master and never at import; a thread started before fork would not exist in the children.
"""

from __future__ import annotations

import logging
import os
import tempfile
from typing import Any

from gunicorn.app.base import BaseApplication

from cronplane.config import Settings

log = logging.getLogger("cronplane.serve")


class _Gunicorn(BaseApplication):  # type: ignore[misc]
    def __init__(self, settings: Settings, database_url: str) -> None:
        self.settings = settings
        self.database_url = database_url
        self.runner: Any = None
        super().__init__()

    def load_config(self) -> None:
        s = self.settings
        config = {
            "bind": f"{s.host}:{s.port}",
            "workers": s.http_workers,
            "threads": s.http_threads,
            "worker_class": "gthread",
            "timeout": 60,
            "graceful_timeout": 35,
            "keepalive": 5,
            "accesslog": None,
            # Several cronplane servers may share a host (tests, scale-out): no shared control socket.
            "control_socket_disable": True,
            "post_fork": self._post_fork,
            "worker_exit": self._worker_exit,
            "when_ready": self._when_ready,
            "child_exit": self._child_exit,
        }
        for key, value in config.items():
            self.cfg.set(key, value)

    def _when_ready(self, _server: Any) -> None:
        print(f"cronplane: serving on http://{self.settings.host}:{self.settings.port}/",
              flush=True)

    def _post_fork(self, _server: Any, _worker: Any) -> None:
        from cronplane.observability.logging import configure_logging

        configure_logging(self.settings.log_level)
        if not self.settings.execution:
            return
        from cronplane.execution.runner import ExecutionRunner
        from cronplane.storage.database import Database

        db = Database(self.database_url, application_name="cronplane-serve-exec",
                      pool_size=max(4, self.settings.worker_concurrency + 4))
        self.runner = ExecutionRunner(self.settings, db, kind="serve")
        self.runner.start()

    def _child_exit(self, _server: Any, worker: Any) -> None:
        try:
            from prometheus_client import multiprocess
        except ImportError:  # pragma: no cover
            return
        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]

    def _worker_exit(self, _server: Any, _worker: Any) -> None:
        if self.runner is not None:
            self.runner.stop(timeout=30)

    def load(self) -> Any:
        from cronplane.api.app import create_app

        return create_app(self.settings, database_url=self.database_url)


def run_gunicorn(settings: Settings, database_url: str) -> None:
    # Metrics from every gunicorn worker are aggregated through files in this directory; it must
    # exist before prometheus_client is first imported in any process.
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="cronplane-metrics-")
    _Gunicorn(settings, database_url).run()
