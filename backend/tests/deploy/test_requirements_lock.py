"""backend/requirements.lock: every runtime dependency pinned with its hashes; the image installs
exactly it and CI's pip-audit reads it (issue 40, item 6). Offline: the lock is checked against
pyproject.toml and against the requirements the installed distributions declare, so adding a
dependency without `make lock` fails here."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.deploy.harness import Stage

REPO = Path(__file__).resolve().parents[3]
LOCK = REPO / "backend/requirements.lock"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")


def _pins() -> dict[str, tuple[Version, int]]:
    """name → (version, number of hashes) for every entry of the lock."""
    pins: dict[str, tuple[Version, int]] = {}
    name = None
    for line in LOCK.read_text().splitlines():
        if match := PIN.match(line):
            name = canonicalize_name(match.group(1))
            assert name not in pins, f"{name} pinned twice"
            pins[name] = (Version(match.group(2)), 0)
        elif "--hash=sha256:" in line and name is not None:
            version, hashes = pins[name]
            pins[name] = (version, hashes + 1)
    return pins


def _runtime_requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "backend/pyproject.toml").read_text())["project"]
    return [Requirement(text) for text in project["dependencies"]]


def test_every_entry_is_pinned_with_hashes() -> None:
    pins = _pins()
    assert len(pins) > 20, "the lock names the whole closure, not only the direct dependencies"
    assert not [name for name, (_, hashes) in pins.items() if hashes == 0], \
        "every pin carries its hashes (pip install --require-hashes)"


def test_the_lock_pins_the_whole_closure_of_pyproject() -> None:
    """Walks pyproject's dependencies, then what each installed distribution requires (extras
    and markers evaluated as for this interpreter); every name met must be pinned at a version
    every specifier met allows."""
    pins = _pins()
    problems: list[str] = []
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(req, frozenset[str]()) for req in _runtime_requirements()]
    while todo:
        req, parent_extras = todo.pop()
        environments = [{"extra": extra} for extra in parent_extras] or [{"extra": ""}]
        if req.marker is not None and not any(req.marker.evaluate(env) for env in environments):
            continue
        name = canonicalize_name(req.name)
        if name not in pins:
            problems.append(f"{req} is not pinned")
            continue
        version = pins[name][0]
        if not req.specifier.contains(version, prereleases=True):
            problems.append(f"{name}=={version} does not satisfy {req}")
        key = (name, frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        todo.extend((Requirement(text), frozenset(req.extras))
                    for text in metadata.distribution(name).requires or [])
    assert not problems, "backend/requirements.lock is stale (run `make lock`):\n" + \
        "\n".join(problems)


def test_the_image_installs_the_lock_and_nothing_resolved_beside_it(
        stages: dict[str, Stage]) -> None:
    run = stages["backend"].text("RUN")
    assert "pip install --require-hashes -r backend/requirements.lock" in run, run
    assert "pip install --no-deps ./backend" in run, run
