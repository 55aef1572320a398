"""Owns the threads of one process's execution plane (``serve`` or ``worker``).

The plane is built by ``plane.build_plane`` (the composition root); the runner starts its
services in that order and stops them in reverse. Nothing here starts at import time.
"""

from __future__ import annotations

import logging
import threading

from cronplane.domain.identity import ProcessIdentity
from cronplane.execution.plane import Plane

log = logging.getLogger(__name__)

# What a service is still given once the stop's deadline has passed: enough to be told to stop
# and to run its on_stop (the registry deregisters, the elector resigns), not a full wait.
STOP_FLOOR_SECONDS = 1.0


class ExecutionRunner:
    def __init__(self, plane: Plane) -> None:
        self.plane = plane
        self._lock = threading.Lock()
        self._started = False

    @property
    def identity(self) -> ProcessIdentity:
        return self.plane.identity

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            for service in self.plane.services:
                service.start()
                log.info("started %s", service.name, extra={"worker_id": self.identity.id})
            self._started = True

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop every service in reverse order within ``timeout`` seconds in all: the services
        share one deadline (each used to be given the whole timeout, so a stop whose services
        each waited on an unreachable database took a multiple of it)."""
        with self._lock:
            if not self._started:
                return True
            clock = self.plane.clock
            deadline = clock.monotonic() + timeout
            floor = min(timeout, STOP_FLOOR_SECONDS)
            ok = True
            for service in reversed(self.plane.services):
                ok = service.stop(max(floor, deadline - clock.monotonic())) and ok
            self._started = False
            return ok
