"""The kinds of chaos experiment: the API's choices, the table's CHECK, management's parameter
specs and the execution plane's fault hooks all name them from here."""

from __future__ import annotations

from enum import StrEnum


class ChaosKind(StrEnum):
    LEADER_STEPDOWN = "leader_stepdown"
    FREEZE_HEARTBEATS = "freeze_heartbeats"
    FAIL_HANDLER = "fail_handler"
    HANDLER_LATENCY = "handler_latency"
    KILL_WORKER_THREAD = "kill_worker_thread"
