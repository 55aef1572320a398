"""Fault injection hooks the worker and heartbeater consult (chaos experiments implement them).

The default injects nothing and costs one attribute lookup and a call per hook. A process holds
one ``FaultSwitch`` (``Plane.faults``, execution/plane.py): services keep a reference to the switch,
and the chaos service installs its injector into it whenever it likes, before or after the
services were built.
"""

from __future__ import annotations

from typing import Protocol


class FaultInjector(Protocol):
    def before_attempt(self, handler: str) -> None:
        """Called in the executor thread before a handler runs: may sleep or raise a failure."""

    def heartbeats_frozen(self) -> bool:
        """True while heartbeats must be skipped (leases then expire and the watchdog reclaims)."""

    def should_kill_thread(self, handler: str) -> bool:
        """True to make the executor thread die before running the handler, silently."""


class NoFaults:
    def before_attempt(self, handler: str) -> None:
        return None

    def heartbeats_frozen(self) -> bool:
        return False

    def should_kill_thread(self, handler: str) -> bool:
        return False


class FaultSwitch:
    """A FaultInjector that delegates to whatever injector is installed (NoFaults by default)."""

    def __init__(self, injector: FaultInjector | None = None) -> None:
        self.injector: FaultInjector = injector or NoFaults()

    def install(self, injector: FaultInjector | None) -> None:
        self.injector = injector or NoFaults()

    def before_attempt(self, handler: str) -> None:
        self.injector.before_attempt(handler)

    def heartbeats_frozen(self) -> bool:
        return self.injector.heartbeats_frozen()

    def should_kill_thread(self, handler: str) -> bool:
        return self.injector.should_kill_thread(handler)
