"""The two line formats: JSON carries the context as fields; the console line is short, carries the
same context as key=value and is coloured only when asked."""

from __future__ import annotations

import io
import json
import logging

from cronplane.observability.logging import ConsoleFormatter, JsonFormatter, choose_formatter


def _record(**extra: object) -> logging.LogRecord:
    record = logging.LogRecord("cronplane.elector", logging.WARNING, __file__, 1,
                               "lost lease %s", ("scheduler",), None)
    record.__dict__.update(extra)
    return record


def test_json_line_carries_message_and_context() -> None:
    entry = json.loads(JsonFormatter().format(_record(worker_id="w1", job_id=7)))
    assert entry["msg"] == "lost lease scheduler" and entry["level"] == "WARNING"
    assert entry["worker_id"] == "w1" and entry["job_id"] == 7


def test_console_line_is_one_line_with_context_and_no_colour_unless_asked() -> None:
    plain = ConsoleFormatter(colour=False).format(_record(worker_id="w1"))
    assert "\n" not in plain and "\x1b[" not in plain
    assert "WARNING" in plain and "elector" in plain and "lost lease scheduler" in plain
    assert plain.endswith("worker_id=w1")
    assert "\x1b[33m" in ConsoleFormatter(colour=True).format(_record())


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_auto_is_console_on_a_terminal_and_json_elsewhere() -> None:
    assert isinstance(choose_formatter("auto", _Tty()), ConsoleFormatter)
    assert isinstance(choose_formatter("auto", io.StringIO()), JsonFormatter)
    assert isinstance(choose_formatter("json", _Tty()), JsonFormatter)
    assert isinstance(choose_formatter("console", io.StringIO()), ConsoleFormatter)
