"""Run a handler as a worker would, without a database, a server or a worker: for the tests of
whoever writes a handler plugin.

    from cronplane.testing import run_handler

    def test_resize() -> None:
        run = run_handler("acme.resize", {"path": "/img/1.png", "key": {"$secret": "S3_KEY"}},
                          secrets={"S3_KEY": "AKIA…"})
        assert run.status == "SUCCEEDED", run.error
        assert run.result == {"width": 640}
        assert "AKIA" not in run.output  # masked as the worker masks it

What matches the worker, so a test that passes here means the same on a worker: the payload is
checked against the handler's schema and its own check first (an invalid payload raises
``InvalidPayload`` with the messages a 422 would carry, an unknown secret included); ``{"$secret":
NAME}`` references become values only for the run, and every value, in every derived form, is
masked in the result, the error and the output; the deadline is the handler's ``timeout`` (or
``timeout=``), after which the run is ``TIMED_OUT`` and the handler's ``ctx.cancelled`` is set; an
exception is ``FAILED`` with the worker's error text, ``Cancelled`` is ``CANCELLED``. What it
leaves out: retries and backoff (one attempt is one call), the database (``ctx.maintenance`` and
``ctx.notifications`` are ``None``) and job tokens (``ctx.job_token`` is ``None``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cronplane.domain.secrets import references, substitute
from cronplane.handlers.context import Cancelled, CancelReason, HandlerContext
from cronplane.handlers.failure import describe_failure
from cronplane.handlers.payload_check import check_payload
from cronplane.handlers.registry import HandlerSpec, Registry, default_registry

__all__ = ["HandlerRun", "InvalidPayload", "run_handler"]

# After the deadline, how long the handler gets to notice ``cancelled`` before the run is given up.
GRACE_SECONDS = 1.0


class InvalidPayload(ValueError):
    """The payload would be refused at submission: ``messages`` are the 422's ``errors``."""

    def __init__(self, handler: str, messages: list[str]) -> None:
        super().__init__(f"{handler}: " + "; ".join(messages))
        self.messages = messages


@dataclass(frozen=True)
class HandlerRun:
    """One attempt's outcome, as the job's attempt would record it (secrets already masked)."""

    status: str  # SUCCEEDED | FAILED | TIMED_OUT | CANCELLED
    result: Any
    error: str | None
    output: str
    exception: BaseException | None


def run_handler(handler: str | HandlerSpec, payload: dict[str, Any], *,
                secrets: Mapping[str, str] | None = None, settings: Any = None,
                timeout: float | None = None, job_id: int = 1, attempt: int = 1,
                project: str = "default", registry: Registry | None = None,
                log: logging.Logger | None = None) -> HandlerRun:
    """Validate ``payload``, run the handler once in a thread of its own, and report the attempt.

    ``handler``: a registered name (built-ins and installed plugins, as a worker loads them) or a
    ``HandlerSpec``. ``secrets``: the values of the names the payload may reference (a name
    missing here is an unknown secret: ``InvalidPayload``, as submission refuses it)."""
    spec = _spec(handler, registry)
    known = dict(secrets or {})
    messages = check_payload(spec, payload, settings, known.__contains__)
    if messages:
        raise InvalidPayload(spec.name, messages)
    seconds = float(spec.timeout if timeout is None else timeout)
    ctx = HandlerContext(job_id=job_id, attempt=attempt, payload=payload,
                         cancelled=threading.Event(), deadline=time.monotonic() + seconds,
                         log=log or logging.getLogger(f"cronplane.testing.{spec.name}"),
                         settings=settings, project=project)
    names, _invalid = references(payload)
    ctx.payload = substitute(payload, known.__getitem__) if names else payload
    ctx.use_secrets(tuple(known[name] for name in sorted(names)))

    outcome: dict[str, Any] = {}

    def attempt_run() -> None:
        try:
            outcome["result"] = spec.fn(ctx)
        except BaseException as exc:  # noqa: BLE001 - the handler's failure is the run's data
            outcome["exception"] = exc

    thread = threading.Thread(target=attempt_run, name=f"cronplane-testing-{spec.name}",
                              daemon=True)
    thread.start()
    thread.join(seconds)
    timed_out = thread.is_alive()
    if timed_out:
        ctx.cancel(CancelReason.TIMED_OUT)
        thread.join(GRACE_SECONDS)
    output = _output(ctx)
    exception: BaseException | None = outcome.get("exception")
    if timed_out:
        return HandlerRun("TIMED_OUT", None, f"timed out after {seconds:g}s", output, exception)
    if isinstance(exception, Cancelled):
        return HandlerRun("CANCELLED", None, str(exception) or "cancelled", output, exception)
    if exception is not None:
        return HandlerRun("FAILED", None, ctx.mask(describe_failure(exception)), output, exception)
    return HandlerRun("SUCCEEDED", ctx.mask(outcome.get("result")), None, output, None)


def _spec(handler: str | HandlerSpec, registry: Registry | None) -> HandlerSpec:
    if isinstance(handler, HandlerSpec):
        return handler
    spec = (registry or default_registry()).get(handler)
    if spec is None:
        raise LookupError(f"no handler named {handler!r} is registered (built-ins and the "
                          f"'cronplane.handlers' entry points)")
    return spec


def _output(ctx: HandlerContext) -> str:
    opened = ctx.opened_output
    if opened is None:
        return ""
    opened.close()  # gives up the tail held back for masking, as the worker's finish does
    return b"".join(chunk for _, chunk in iter(opened.take, None)).decode(errors="replace")

