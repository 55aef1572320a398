"""Build hook: the wheel carries the migrations and the built console, so `pip install ./backend`
(or the wheel from `python -m build`) serves the console with nothing else installed.

- In the checkout the sources are ``../migrations`` and ``../frontend/dist``; the console is
  (re)built with npm when ``dist`` is missing or older than ``frontend/src``.
- The sdist carries both under ``migrations/`` and ``console/``, so a wheel built from it (which is
  what `python -m build` does) needs neither the checkout nor Node.
- Editable installs include nothing: the app serves ``frontend/dist`` of the checkout directly.
- No npm and no built console: the wheel is built without it and ``/`` says how to build it.
  ``CRONPLANE_CONSOLE_BUILD=off`` skips the npm step (use what ``dist`` has).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _newest(tree: Path) -> float:
    return max((p.stat().st_mtime for p in tree.rglob("*") if p.is_file()), default=0.0)


class ConsoleBuildHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        if self.target_name == "wheel" and version == "editable":
            return
        migrations = self._first(root / "migrations", root.parent / "migrations")
        console = self._console(root)
        include = build_data.setdefault("force_include", {})
        wheel = self.target_name == "wheel"
        if migrations is not None:
            include[str(migrations)] = "cronplane/_migrations" if wheel else "migrations"
        if console is not None:
            include[str(console)] = "cronplane/console" if wheel else "console"
        else:
            self.app.display_warning(
                "cronplane: building without the console (no frontend/dist and no npm); "
                "`/` will explain how to build it")

    @staticmethod
    def _first(*candidates: Path) -> Path | None:
        return next((c for c in candidates if c.is_dir() and c.resolve() != Path("/")), None)

    def _console(self, root: Path) -> Path | None:
        packed = root / "console"
        if (packed / "index.html").is_file():
            return packed  # building from the sdist
        frontend = root.parent / "frontend"
        dist = frontend / "dist"
        if not (frontend / "package.json").is_file():
            return dist if (dist / "index.html").is_file() else None
        stale = (not (dist / "index.html").is_file()
                 or _newest(frontend / "src") > (dist / "index.html").stat().st_mtime)
        if stale and os.environ.get("CRONPLANE_CONSOLE_BUILD", "on") != "off":
            npm = shutil.which("npm")
            if npm is not None:
                self.app.display_info("cronplane: building the console (npm run build)")
                if not (frontend / "node_modules").is_dir():
                    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                                   cwd=frontend, check=True)
                subprocess.run([npm, "run", "build"], cwd=frontend, check=True)
        return dist if (dist / "index.html").is_file() else None
