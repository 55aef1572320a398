"""Logs for people and for machines: one event per line either way, carrying the request id.

On a terminal the lines are short and coloured (time, level, where, message, key=value context);
anywhere else, or with ``CRONPLANE_LOG_FORMAT=json``, each line is one JSON object. gunicorn's own
lines go through the same handler (``serving.GunicornLogger``), so a terminal never mixes two formats.
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

from cronplane.observability import tracing

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "cronplane_request_id", default=None)

CONTEXT_KEYS = ("job_id", "attempt", "worker_id", "schedule_id", "owner", "fencing_token",
                "audit_checkpoint")
FORMATS = ("auto", "console", "json")


def _context(record: logging.LogRecord) -> dict[str, Any]:
    found: dict[str, Any] = {}
    request_id = request_id_var.get()
    if request_id:
        found["request_id"] = request_id
    # The span current in this thread (a request's, an attempt's): its logs find its trace.
    trace_id = tracing.current_trace_id()
    if trace_id:
        found["trace_id"] = trace_id
    for key in CONTEXT_KEYS:
        value = record.__dict__.get(key)
        if value is not None:
            found[key] = value
    return found


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
            "thread": record.threadName,
        }
        context = _context(record)
        if "request_id" in context:
            entry["request_id"] = context.pop("request_id")
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        entry.update(context)
        return json.dumps(entry, default=str)


_LEVEL_COLOURS = {"DEBUG": "\x1b[2m", "INFO": "\x1b[32m", "WARNING": "\x1b[33m",
                  "ERROR": "\x1b[31m", "CRITICAL": "\x1b[1;31m"}
_DIM, _BOLD, _CYAN, _RESET = "\x1b[2m", "\x1b[1m", "\x1b[36m", "\x1b[0m"


class ConsoleFormatter(logging.Formatter):
    """``22:17:44.243 INFO  elector      became leader …  worker_id=vm:1:ab``, coloured if asked."""

    def __init__(self, colour: bool) -> None:
        super().__init__()
        self.colour = colour

    def _paint(self, code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if self.colour else text

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created).strftime("%H:%M:%S.%f")[:-3]
        level = record.levelname
        # The last part of the logger name is enough to tell where a line came from.
        where = ("gunicorn" if record.name.startswith("gunicorn")
                 else record.name.removeprefix("cronplane.").rsplit(".", 1)[-1])
        parts = [self._paint(_DIM, when),
                 self._paint(_LEVEL_COLOURS.get(level, ""), f"{level:<7}"),
                 self._paint(_CYAN, f"{where:<12}"),
                 self._paint(_BOLD, record.getMessage()) if level != "DEBUG"
                 else record.getMessage()]
        context = _context(record)
        if context:
            parts.append(" ".join(self._paint(_DIM, f"{k}=") + str(v) for k, v in context.items()))
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def choose_formatter(log_format: str, stream: TextIO) -> logging.Formatter:
    if log_format == "json":
        return JsonFormatter()
    tty = bool(getattr(stream, "isatty", lambda: False)())
    if log_format == "console":
        return ConsoleFormatter(colour=tty)
    return ConsoleFormatter(colour=True) if tty else JsonFormatter()


def configure_logging(level: str = "INFO", log_format: str = "auto") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(choose_formatter(log_format, sys.stderr))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # gunicorn and werkzeug log through the root handler too.
    for name in ("gunicorn.error", "gunicorn.access", "werkzeug"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    # Alembic announces every plugin at INFO; operators only need its warnings.
    logging.getLogger("alembic").setLevel(max(logging.WARNING, root.level))
    logging.getLogger("pgserver").setLevel(max(logging.WARNING, root.level))
