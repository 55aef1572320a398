"""deploy/Dockerfile, read with Docker's own parser, and the wheel it installs."""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.harness import (
    REPO,
    Stage,
    assert_ok,
    dockerfile_uid,
    exec_form,
    run,
)


def test_dockerfile_builds_the_spa_with_node_20_and_installs_into_python_3_11_slim(
        stages: dict[str, Stage]) -> None:
    assert stages["frontend"].image.startswith("node:20"), stages["frontend"].image
    assert "npm run build" in stages["frontend"].text("RUN")
    assert stages["runtime"].image.startswith("python:3.11-slim"), stages["runtime"].image
    assert stages["caddy"].image.startswith("caddy:2"), stages["caddy"].image
    assert "--from=frontend" in stages["runtime"].text("COPY"), (
        "the runtime image should carry the built SPA")
    assert "--from=frontend" in stages["caddy"].text("COPY"), (
        "the caddy image serves the SPA files, so it must copy them from the frontend stage")


def test_image_runs_as_a_non_root_numeric_user(stages: dict[str, Stage]) -> None:
    assert dockerfile_uid(stages) != 0, "the runtime image must not run as root"


def healthcheck_command(stages: dict[str, Stage]) -> list[str]:
    check = exec_form(stages["runtime"].last("HEALTHCHECK"), "HEALTHCHECK")
    assert check[0] == "CMD", f"HEALTHCHECK {check}"
    return check[1:]


def test_healthcheck_probes_healthz_without_curl_unless_installed(
        stages: dict[str, Stage]) -> None:
    command = healthcheck_command(stages)
    assert "/healthz" in " ".join(command)
    if command[0] == "curl":
        assert "curl" in stages["runtime"].text("RUN"), (
            "HEALTHCHECK uses curl, which python:3.11-slim does not have")


class _Health(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        self.send_response(self.status if self.path == "/healthz" else 404)
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.mark.parametrize("status,healthy", [(200, True), (503, False)])
def test_healthcheck_command_passes_only_when_healthz_answers_200(
        stages: dict[str, Stage], status: int, healthy: bool) -> None:
    command = healthcheck_command(stages)
    assert command[0] == "python", f"cannot run {command[0]} here; only the python form is tested"
    handler = type("Health", (_Health,), {"status": status})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {**os.environ, "CRONPLANE_PORT": str(server.server_address[1])}
        result = run([sys.executable, *command[1:]], env=env, timeout=30)
    finally:
        server.shutdown()
        server.server_close()
    assert (result.returncode == 0) is healthy, (
        f"healthcheck exit {result.returncode} for /healthz {status}: {result.stderr}")


def dockerignore_excludes(relative: str) -> bool:
    """Whether .dockerignore keeps this path (or a parent folder) out of the build context."""
    patterns = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.strip().startswith("#")]

    def to_regex(pattern: str) -> re.Pattern[str]:
        out = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out += "(?:.*/)?"
                i += 3
            elif pattern.startswith("**", i):
                out += ".*"
                i += 2
            elif pattern[i] == "*":
                out += "[^/]*"
                i += 1
            elif pattern[i] == "?":
                out += "[^/]"
                i += 1
            else:
                out += re.escape(pattern[i])
                i += 1
        return re.compile(out + r"\Z")

    parts = relative.strip("/").split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        regex = to_regex(pattern.lstrip("!").strip("/"))
        if any(regex.match(candidate) for candidate in candidates):
            excluded = not negated
    return excluded


def test_dockerignore_matcher_understands_the_patterns_used() -> None:
    assert dockerignore_excludes("frontend/node_modules/react/index.js")
    assert dockerignore_excludes(".venv/bin/python")
    assert dockerignore_excludes(".env")
    assert not dockerignore_excludes(".env.example")
    assert not dockerignore_excludes("backend/src/cronplane/cli.py")


def test_every_copied_path_exists_and_is_in_the_build_context(stages: dict[str, Stage]) -> None:
    for stage in stages.values():
        for command in stage.all("COPY"):
            if any(flag.startswith("--from=") for flag in command.flags):
                continue
            for source in command.value[:-1]:
                assert (REPO / source).exists(), f"COPY {source}: no such path in the repository"
                assert not dockerignore_excludes(source), (
                    f"COPY {source}: .dockerignore keeps it out of the build context")


def test_the_wheel_built_like_the_image_carries_every_migration(tmp_path: Path) -> None:
    """The backend stage copies backend/ and migrations/ (minus .dockerignore) and pip-installs
    ./backend; `cronplane migrate` in the image depends on the wheel force-including ../migrations."""
    import zipfile

    for top in ("backend", "migrations"):
        for source in (REPO / top).rglob("*"):
            relative = str(source.relative_to(REPO))
            if source.is_file() and not dockerignore_excludes(relative):
                target = tmp_path / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
    result = run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
                  str(tmp_path / "dist"), "./backend"], cwd=tmp_path, timeout=300)
    assert_ok(result, "pip wheel ./backend (as in the Dockerfile)")
    [wheel] = (tmp_path / "dist").glob("cronplane-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"cronplane/_migrations/{p.relative_to(REPO / 'migrations')}"
                for p in (REPO / "migrations").rglob("*.py") if "__pycache__" not in p.parts}
    assert expected and expected <= names, f"missing from the wheel: {sorted(expected - names)}"
    assert "cronplane/cli.py" in names
