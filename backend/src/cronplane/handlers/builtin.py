"""Imports every built-in handler module so each registers itself."""

from cronplane.handlers import (  # noqa: F401
    fail,
    http_request,
    noop,
    notification_deliver,
    purge_history,
    shell_command,
    sleep,
)
