"""JSON logs, one object per line, carrying the request id when there is one."""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from datetime import UTC, datetime

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "cronplane_request_id", default=None)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
            "thread": record.threadName,
        }
        request_id = request_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        for key in ("job_id", "attempt", "worker_id", "schedule_id", "owner", "fencing_token"):
            value = record.__dict__.get(key)
            if value is not None:
                entry[key] = value
        return json.dumps(entry, default=str)


def configure_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
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
