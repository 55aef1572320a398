"""``cronplane.testing.run_handler``: what a plugin author's test sees is what a worker records —
the schema's 422 messages, secrets resolved for the run and masked in every derived form, the
worker's error text, the deadline with ``cancelled`` set, ``Cancelled`` as CANCELLED."""

from __future__ import annotations

import base64
import threading
from typing import Any

import pytest

from cronplane.handlers.context import Cancelled, HandlerContext
from cronplane.handlers.registry import Registry
from cronplane.testing import InvalidPayload, run_handler

SECRET = "tok-4f9a7c2e-prod"
registry = Registry()
seen: dict[str, Any] = {}


@registry.handler("acme.echo", schema={
    "type": "object", "properties": {"key": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["n"], "additionalProperties": False}, timeout=5)
def echo(ctx: HandlerContext) -> dict[str, Any]:
    ctx.output.write(f"key={ctx.payload.get('key')}\n")
    ctx.output.write(base64.b64encode(str(ctx.payload.get("key")).encode()).decode() + "\n")
    return {"n": ctx.payload["n"] * 2, "echo": ctx.payload.get("key")}


@registry.handler("acme.boom", timeout=5)
def boom(ctx: HandlerContext) -> None:
    raise RuntimeError(f"upstream refused {ctx.payload['key']}")


@registry.handler("acme.wait", timeout=60)
def wait(ctx: HandlerContext) -> None:
    seen["woken_by_cancel"] = ctx.cancelled.wait(30)
    ctx.raise_if_cancelled()


@registry.handler("acme.stop", timeout=5)
def stop(ctx: HandlerContext) -> None:
    raise Cancelled("the handler gave up")


def test_a_valid_payload_runs_with_its_secret_resolved_and_masked_everywhere() -> None:
    run = run_handler("acme.echo", {"n": 21, "key": {"$secret": "API_KEY"}},
                      secrets={"API_KEY": SECRET}, registry=registry)
    assert run.status == "SUCCEEDED" and run.error is None, run.error
    assert run.result == {"n": 42, "echo": "***"}
    assert run.output.splitlines() == ["key=***", "***"], run.output
    assert SECRET not in repr(run), "the value never comes back, base64 included"


def test_an_invalid_payload_raises_the_messages_a_422_carries() -> None:
    with pytest.raises(InvalidPayload) as refused:
        run_handler("acme.echo", {"n": "twenty", "extra": True}, registry=registry)
    assert refused.value.messages == [
        "Additional properties are not allowed ('extra' was unexpected)", "n: expected integer"]
    assert "twenty" not in str(refused.value), "a message names the path, never the value"


def test_a_failure_is_failed_with_the_workers_error_text_masked() -> None:
    run = run_handler("acme.boom", {"key": {"$secret": "API_KEY"}},
                      secrets={"API_KEY": SECRET}, registry=registry)
    assert run.status == "FAILED" and isinstance(run.exception, RuntimeError)
    assert run.error is not None and run.error.startswith("RuntimeError: upstream refused ***")
    assert SECRET not in run.error


def test_an_unknown_secret_is_refused_as_submission_refuses_it() -> None:
    with pytest.raises(InvalidPayload) as refused:
        run_handler("acme.boom", {"key": {"$secret": "MISSING"}}, registry=registry)
    assert refused.value.messages == ["unknown secret 'MISSING'"]


def test_the_deadline_sets_cancelled_and_the_run_is_timed_out() -> None:
    run = run_handler("acme.wait", {}, timeout=0.2, registry=registry)
    assert run.status == "TIMED_OUT" and run.error == "timed out after 0.2s"
    assert seen["woken_by_cancel"] is True, "the handler saw ctx.cancelled at its deadline"


def test_cancelled_is_cancelled() -> None:
    run = run_handler("acme.stop", {}, registry=registry)
    assert (run.status, run.error) == ("CANCELLED", "the handler gave up")


def test_built_in_handlers_run_by_name() -> None:
    run = run_handler("noop", {})
    assert run.status == "SUCCEEDED"
    with pytest.raises(LookupError, match=r"no handler named 'acme\.nothing'"):
        run_handler("acme.nothing", {})
    assert threading.active_count() < 50
