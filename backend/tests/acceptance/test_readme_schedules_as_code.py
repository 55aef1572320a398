"""The README's "Schedules as code" commands, run as written against a real server: each line of
the block runs in a shell (with CRONPLANE_URL/TOKEN set as the block's first line says), and a
`# → "…"` comment is the output that line must print."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import requests

from tests.acceptance.serve_process import Serve

REPO = Path(__file__).resolve().parents[3]
ADMIN_PASSWORD = "long enough admin pw"


def _block(section: str) -> list[str]:
    text = (REPO / "README.md").read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", body, re.S)
    assert block, f"no sh block in README section {section!r}"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_schedules_as_code_block_runs_as_written(make_database, tmp_path) -> None:
    lines = _block("Schedules as code")
    assert lines[0].startswith("export CRONPLANE_URL=")
    server = Serve(make_database(), tmp_path / "data",
                   CRONPLANE_ADMIN_USERNAME="root", CRONPLANE_ADMIN_PASSWORD=ADMIN_PASSWORD)
    try:
        server.wait_ready()
        access = requests.post(server.base + "/api/v1/auth/login", timeout=10, json={
            "username": "root", "password": ADMIN_PASSWORD}).json()["access_token"]
        token = requests.post(server.base + "/api/v1/tokens", timeout=10,
                              headers={"Authorization": f"Bearer {access}"},
                              json={"name": "readme", "role": "ADMIN"}).json()["token"]
        work = tmp_path / "work"
        shutil.copytree(REPO / "examples", work / "examples")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
        env.update({"CRONPLANE_URL": server.base, "CRONPLANE_TOKEN": token,
                    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"})
        for line in lines[1:]:
            command, _, comment = line.partition("#")
            result = subprocess.run(command, shell=True, cwd=work, env=env, capture_output=True,
                                    text=True, timeout=90)
            assert result.returncode == 0, f"{command!r}: {result.stdout}{result.stderr}"
            expected = re.search(r'→ "(.*)"', comment)
            if expected:
                position = 0
                for part in (p.strip() for p in expected.group(1).split("…")):
                    found = result.stdout.find(part, position)
                    assert found >= 0, f"{command!r} should print {expected.group(1)!r}: {result.stdout}"
                    position = found + len(part)
        assert (work / "schedules.yaml").is_file(), "the export line wrote its file"
    finally:
        server.stop()
