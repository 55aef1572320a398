"""What a handler gets when it runs: its job, a cancellation signal, a deadline, a logger, and
an output stream (``ctx.output.write(text)``) that operators read while it runs."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from cronplane.domain.notifications import DeliveryTarget, Message
from cronplane.domain.retention import PurgedBatch
from cronplane.domain.secrets import Masker
from cronplane.handlers.output import Output


class Cancelled(Exception):
    """Raised by a handler (or ``ctx.raise_if_cancelled()``) when it stopped because it was told to."""


class CancelReason(StrEnum):
    """Why a handler's ``cancelled`` event was set (the first reason wins)."""

    REQUESTED = "cancel requested"  # a person cancelled the job: the attempt ends CANCELLED
    RECLAIMED = "attempt reclaimed"  # the lease expired; another worker owns the job now
    SHUTDOWN = "worker shutting down"  # the job is released to another worker
    TIMED_OUT = "timed out"


class Maintenance(Protocol):
    """The narrow storage API maintenance handlers get instead of a database connection: each call
    is its own short transaction, so a long purge never holds locks the hot path waits on."""

    def purge_finished(self, older_than_days: int, batch: int,
                       after: datetime | None = None, *, project: str = ...) -> PurgedBatch: ...

    def prune_throughput(self) -> int: ...

    def prune_usage(self) -> int: ...


class Notifications(Protocol):
    """The storage ``notification.deliver`` needs: read its channel when the attempt runs, and
    record every attempt (with the answer) for ``…/deliveries``."""

    def target(self, channel_id: int) -> DeliveryTarget | None: ...

    def admit(self, message: Message, *, limit: int) -> bool: ...

    def record_delivery(self, message: Message, *, job_id: int, attempt: int,
                        status_code: int | None, error: str | None,
                        duration_ms: float) -> None: ...


class _MaskedLog(logging.LoggerAdapter[logging.Logger]):
    """A handler's logger while its payload holds secrets: each message is formatted here and
    masked before any log handler sees it."""

    def __init__(self, logger: logging.Logger, masker: Masker) -> None:
        super().__init__(logger, {})
        self._masker = masker

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        if not self.isEnabledFor(level):
            return
        text = str(msg) % args if args else str(msg)
        self.logger.log(level, self._masker.text(text), **kwargs)


@dataclass
class HandlerContext:
    job_id: int
    attempt: int
    payload: dict[str, Any]
    # Set when the job's cancel was requested, its timeout passed, its attempt was reclaimed,
    # or the worker is shutting down. Handlers poll ``cancelled.is_set()`` or ``wait()`` on it.
    cancelled: threading.Event
    deadline: float  # monotonic() value after which the attempt is TIMED_OUT
    log: logging.Logger | logging.LoggerAdapter[logging.Logger]
    settings: Any = None
    project: str = "default"  # the job's project: what a maintenance handler may touch
    # Storage operations for maintenance handlers; None when the handler runs without a database.
    maintenance: Maintenance | None = None
    # Channels and delivery records for the built-in notification handler.
    notifications: Notifications | None = None
    reason: list[str] = field(default_factory=list)
    # The clock ``deadline`` is on (the worker's, so a test clock moves both).
    monotonic: Callable[[], float] = time.monotonic
    # Resolved ``{"$secret": …}`` values in ``payload``; whatever the run writes back (result,
    # error, output) goes through ``mask`` so none of them, in any derived form, reaches the
    # database. Set with ``use_secrets`` when the attempt starts.
    secret_values: tuple[str, ...] = ()
    # Where a request carrying the payload's secrets may go: None = anywhere the egress policy
    # allows; else only these origins (``NAME.origins``). ``carries_secret``: no redirect to
    # another origin.
    secret_origins: frozenset[str] | None = None
    _masker: Masker | None = field(default=None, init=False, repr=False)
    # Makes the attempt's output stream (``GET /jobs/{id}/attempts/{n}/output``) on first use:
    # most handlers never write, and then the worker spends nothing on output.
    open_output: Callable[[], Output] = Output
    # The W3C traceparent of this attempt's process span (None when tracing is off): outbound
    # calls (http.request, webhook deliveries) send it so the receiver joins the trace.
    traceparent: str | None = None
    # The job's batch, and how to get the attempt's job token (the worker's; None without a
    # database): ``job_token`` makes it on first use, so attempts that never ask cost nothing.
    batch_id: int | None = None
    issue_job_token: Callable[[], str] | None = field(default=None, repr=False)
    _output: Output | None = field(default=None, init=False, repr=False)
    _job_token: str | None = field(default=None, init=False, repr=False)

    @property
    def job_token(self) -> str | None:
        """``CRONPLANE_JOB_TOKEN``: lets this attempt add jobs to its own batch
        (``POST /batches/{batch_id}/jobs``), and nothing else; it dies when the attempt ends.
        None for a job that is in no batch."""
        if self._job_token is None and self.batch_id is not None \
                and self.issue_job_token is not None:
            self._job_token = self.issue_job_token()
            # A credential like a secret: a program that prints its environment must not hand
            # the token to whoever reads the output (a VIEWER) while the attempt still runs.
            self.secret_values = (*self.secret_values, self._job_token)
            self._masker = None
            if self._output is not None:
                self._output.mask_with(self.masker.stream())
        return self._job_token

    @property
    def output(self) -> Output:
        """What the attempt prints, masked like everything else it reports."""
        if self._output is None:
            self._output = self.open_output()
            if self.secret_values:
                self._output.mask_with(self.masker.stream())
        return self._output

    @property
    def opened_output(self) -> Output | None:
        """The output stream if the handler used it (the worker finishes it), else None."""
        return self._output

    def use_secrets(self, values: tuple[str, ...],
                    origins: frozenset[str] | None = None) -> None:
        self.secret_values = values
        self.secret_origins = origins
        self._masker = None
        if values:
            logger = self.log.logger if isinstance(self.log, logging.LoggerAdapter) else self.log
            self.log = _MaskedLog(logger, self.masker)

    @property
    def carries_secret(self) -> bool:
        return bool(self.secret_values)

    @property
    def masker(self) -> Masker:
        if self._masker is None:
            self._masker = Masker(self.secret_values)
        return self._masker

    def mask(self, value: Any) -> Any:
        return self.masker(value) if self.secret_values else value

    @property
    def remaining(self) -> float:
        return max(0.0, self.deadline - self.monotonic())

    def sleep(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; returns True if woken early by cancellation."""
        return self.cancelled.wait(max(0.0, min(seconds, self.remaining)))

    def raise_if_cancelled(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled(self.reason[0] if self.reason else "cancelled")

    def storage(self) -> Maintenance:
        if self.maintenance is None:
            raise RuntimeError("this handler context has no database access")
        return self.maintenance

    @property
    def cancel_reason(self) -> CancelReason | None:
        if not self.reason:
            return None
        try:
            return CancelReason(self.reason[0])
        except ValueError:
            return None

    def cancel(self, reason: CancelReason | str) -> None:
        if not self.reason:
            self.reason.append(reason)
        self.cancelled.set()
