"""One harness per real server process: a free port, ``cronplane serve`` started in its own
process group with its output collected, ready once it says so and ``/healthz`` answers, and the
repository's Caddyfile served by the real caddy. Acceptance tests, the deploy and HA tests and the
e2e suite use these (bench keeps its own, tuned for timing: bench/api.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import requests

from tests.support.waiting import wait_until

CLI = [sys.executable, "-m", "cronplane.cli"]
REPO = Path(__file__).resolve().parents[3]


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def follow_output(stream: IO[str], ready: Callable[[str], bool], *, at_end: bool = False
                  ) -> tuple[list[str], threading.Event]:
    """Reads a process's ``stream`` on a daemon thread into a list of lines (newlines stripped);
    the event is set at the first line ``ready`` accepts, and also when the stream ends if
    ``at_end``."""
    lines: list[str] = []
    event = threading.Event()

    def follow() -> None:
        for line in stream:
            lines.append(line.rstrip("\n"))
            if ready(line):
                event.set()
        if at_end:
            event.set()

    threading.Thread(target=follow, daemon=True).start()
    return lines, event


class Serve:
    """``cronplane serve`` in its own process group, its output collected line by line."""

    def __init__(self, database_url: str, data_dir: Path, *, command: list[str] | None = None,
                 **env: str) -> None:
        """``command`` replaces ``cronplane serve`` (e.g. ``make`` running it, as ``make run``)."""
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        full = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
        full.update({"DATABASE_URL": database_url, "CRONPLANE_PORT": str(self.port),
                     "CRONPLANE_DATA_DIR": str(data_dir), "CRONPLANE_HTTP_WORKERS": "1",
                     "CRONPLANE_EXECUTION": "off", "CRONPLANE_LOG_FORMAT": "json",
                     "CRONPLANE_ENV": "development"})
        full.update(env)
        self.proc = subprocess.Popen(command or [*CLI, "serve"], env=full, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        assert self.proc.stdout is not None
        # Ready at the banner's last line, or when the output ends (wait_ready then says it died).
        self.lines, self.ready = follow_output(self.proc.stdout, lambda line: "Stop:" in line,
                                               at_end=True)

    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_ready(self) -> None:
        assert self.ready.wait(60), self.output()
        assert self.proc.poll() is None, self.output()
        wait_until(self._healthy, timeout=30)

    def _healthy(self) -> bool:
        try:
            return requests.get(self.base + "/healthz", timeout=5).ok
        except requests.RequestException:  # a read timeout on a loaded box is "not yet"
            return False

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


@contextmanager
def caddy_serving(caddy: str, home: Path, *, site_root: Path, upstream: str) -> Iterator[str]:
    """The repository's Caddyfile, verbatim behind a global block that only turns the admin API
    off (so this never collides with another Caddy on the machine), served by ``caddy`` on a free
    port: ``site_root`` as the console's files and ``upstream`` (host:port) as the API. Yields its
    base URL once it answers; ``home`` holds its config and state."""
    config = home / "Caddyfile"
    config.write_text("{\n\tadmin off\n}\n\n" + (REPO / "Caddyfile").read_text())
    port = free_port()
    env = {**os.environ, "CRONPLANE_DOMAIN": f":{port}", "HOME": str(home),
           "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config"),
           "CRONPLANE_SPA_ROOT": str(site_root), "CRONPLANE_UPSTREAM": upstream}
    process = subprocess.Popen([caddy, "run", "--adapter", "caddyfile", "--config", str(config)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    assert process.stderr is not None
    log, serving = follow_output(process.stderr, lambda line: "serving initial configuration" in line)
    url = f"http://127.0.0.1:{port}"
    try:
        assert serving.wait(timeout=20), "caddy did not start:\n" + "\n".join(log[-20:])
        # Caddy logs before its listener accepts on every platform; one request proves it does.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        opener.open(f"{url}/index.html", timeout=10).read()
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
