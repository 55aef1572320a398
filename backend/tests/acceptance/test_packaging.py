"""The package carries the console: `python -m build` gives an sdist and a wheel that pass
`twine check`, the wheel (built from the sdist, as pip does) holds the console and the migrations,
and installed into a fresh virtualenv it migrates and serves the console at `/`.

Bounded time: the console already built in ``frontend/dist`` is reused (no npm), the build runs
without isolation (hatchling is a dev dependency) and the fresh venv gets the wheel with
``--no-index --no-deps``; its dependencies come from this venv's site-packages through a ``.pth``
path line (which, unlike a site dir, does not run this venv's editable-install hook)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import threading
import venv
import zipfile
from pathlib import Path

import pytest
import requests

from tests.acceptance.processes import wait_until
from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[3]
BACKEND = REPO / "backend"
DIST = REPO / "frontend" / "dist"

pytestmark = pytest.mark.slow




@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    if not (DIST / "index.html").is_file():
        pytest.skip("frontend/dist is not built (make frontend); the hook would run npm")
    out = tmp_path_factory.mktemp("dist")
    env = {**os.environ, "CRONPLANE_CONSOLE_BUILD": "off"}
    result = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out),
                             str(BACKEND)], env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0]}


def test_sdist_and_wheel_pass_twine_check(built) -> None:
    result = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                             str(built["wheel"]), str(built["sdist"])],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2


def test_wheel_built_from_the_sdist_carries_console_and_migrations(built) -> None:
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    assert "cronplane/console/index.html" in names
    assert any(n.startswith("cronplane/console/assets/") and n.endswith(".js") for n in names)
    assert "cronplane/_migrations/env.py" in names
    assert any(n.startswith("cronplane/_migrations/versions/") for n in names)


def test_wheel_in_a_fresh_venv_serves_the_console(built, fresh_database_url, tmp_path) -> None:
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                              "--quiet", "--no-index", "--no-deps", str(built["wheel"])],
                             capture_output=True, text=True, timeout=180)
    assert install.returncode == 0, install.stderr
    # Dependencies from this venv, appended after the fresh venv's own site-packages.
    (Path(purelib) / "zz_cronplane_test_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    # Without the suite's PYTHONPATH: run from a worktree (PYTHONPATH=…/backend/src), the fresh
    # venv would import that checkout ahead of the wheel it is here to test.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run([str(python), "-c", "import cronplane, sys; print(cronplane.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path, env=clean).stdout
    assert where.startswith(purelib), f"the wheel's cronplane, not the checkout's: {where}"

    port = free_port()
    env = {k: v for k, v in clean.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    env.update({"DATABASE_URL": fresh_database_url, "CRONPLANE_PORT": str(port),
                "CRONPLANE_DATA_DIR": str(tmp_path / "data"), "CRONPLANE_HTTP_WORKERS": "1",
                "CRONPLANE_EXECUTION": "off", "CRONPLANE_ENV": "test"})
    cli = [str(target / "bin" / "cronplane")]
    migrated = subprocess.run([*cli, "migrate"], env=env, cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
    assert migrated.returncode == 0, migrated.stderr
    proc = subprocess.Popen([*cli, "serve"], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True).start()
    base = f"http://127.0.0.1:{port}"
    try:
        def up() -> bool:
            assert proc.poll() is None, "".join(lines)
            try:
                return requests.get(base + "/healthz", timeout=2).ok
            except requests.RequestException:  # not listening yet, or too slow on a loaded box
                return False
        wait_until(up, timeout=60, step=0.2)
        page = requests.get(base + "/", timeout=5)
        assert page.status_code == 200 and '<div id="root">' in page.text, page.text[:500]
        asset = next(part.split('"')[0] for part in page.text.split('src="')[1:]
                     if part.startswith("/assets/"))
        script = requests.get(base + asset, timeout=5)
        assert script.status_code == 200 and len(script.content) > 10_000
        deep = requests.get(base + "/schedules", timeout=5)
        assert '<div id="root">' in deep.text, "client routes load the app"
    finally:
        proc.terminate()
        proc.wait(30)
