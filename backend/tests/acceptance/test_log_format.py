"""One log format per run: JSON lines for machines, readable lines for people, gunicorn's own
lines included, and no warning noise at start."""

from __future__ import annotations

import json

from tests.support.servers import Serve


def _log_lines(output: str) -> list[str]:
    """Everything except the banner block (which starts at ``cronplane: serving`` and ends at the
    blank line after ``Stop:``)."""
    lines, in_banner = [], False
    for line in output.splitlines():
        if line.startswith("cronplane: serving on"):
            in_banner = True
        if not in_banner and line.strip():
            lines.append(line)
        if in_banner and line.strip().startswith("Stop:"):
            in_banner = False
    return lines


def test_json_format_makes_every_line_json_gunicorn_included(fresh_database_url, tmp_path) -> None:
    server = Serve(fresh_database_url, tmp_path, CRONPLANE_LOG_FORMAT="json",
                   CRONPLANE_ADMIN_USERNAME="root", CRONPLANE_ADMIN_PASSWORD="long enough pw")
    try:
        server.wait_ready()
    finally:
        server.stop()
    entries = [json.loads(line) for line in _log_lines(server.output())]
    loggers = {entry["logger"] for entry in entries}
    assert "gunicorn.error" in loggers, loggers
    assert any("Listening at" in entry["msg"] for entry in entries)
    assert not any("Warning" in line or "warn" in line.lower() for line in server.output().splitlines())


def test_console_format_is_one_readable_line_per_event(fresh_database_url, tmp_path) -> None:
    server = Serve(fresh_database_url, tmp_path, CRONPLANE_LOG_FORMAT="console",
                   CRONPLANE_ADMIN_USERNAME="root", CRONPLANE_ADMIN_PASSWORD="long enough pw")
    try:
        server.wait_ready()
    finally:
        server.stop()
    lines = _log_lines(server.output())
    assert lines
    assert not any(line.lstrip().startswith(("{", "[")) for line in lines), lines
    listening = [line for line in lines if "Listening at" in line]
    assert listening and " INFO " in listening[0] and "gunicorn" in listening[0], listening
    assert "\x1b[" not in server.output(), "no colour codes when the output is not a terminal"
    assert "XDG_RUNTIME_DIR" not in server.output()
