"""What a schedule's definition holds and what a field left out means, defined once.

The server (management/schedules.py) fills a new schedule from ``DEFAULTS``; schedules-as-code
(client/schedules_as_code.py) fills a file's schedule from the same ``DEFAULTS`` and leaves them
out when it exports; the API publishes them in OpenAPI (``default``), which the console's new
schedule form starts from.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from cronplane.domain.firing import Misfire, Overlap
from cronplane.domain.health import AlertConfig
from cronplane.domain.limits import DEFAULT_MAX_ATTEMPTS

# Every field a client may set, in the order the API and the files show them.
FIELDS = ("name", "description", "handler", "payload", "cron", "timezone", "paused",
          "priority", "max_attempts", "timeout_seconds", "overlap", "misfire", "queue",
          "alerts", "notify", "upstream")
REQUIRED = ("name", "handler", "cron")
DEFAULT_QUEUE = "default"
# Read-only: callers merge it (``{**DEFAULTS, **given}``), never change it.
DEFAULTS: MappingProxyType[str, Any] = MappingProxyType({
    "description": "", "payload": {}, "timezone": "UTC", "paused": False, "priority": 0,
    "max_attempts": DEFAULT_MAX_ATTEMPTS, "timeout_seconds": None,
    "overlap": Overlap.FORBID.value, "misfire": Misfire.SKIP.value, "queue": DEFAULT_QUEUE,
    # Every alert rule, off: an alert a file leaves out is off.
    "alerts": AlertConfig().to_json(), "notify": [], "upstream": []})
MAX_NAME = 200
MAX_DESCRIPTION = 2000
MAX_NOTIFY = 20  # channel names in ``notify``
