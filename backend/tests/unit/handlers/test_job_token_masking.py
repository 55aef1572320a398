"""The job token is a credential: once an attempt has it, its output, result and error mask it
like a secret — whether the output was opened before the token was issued or after."""

from __future__ import annotations

import logging
import threading
import time

from cronplane.handlers.context import HandlerContext

TOKEN = "cpj_9f8e7d6c5b4a3f2e1d0c"


def _ctx() -> HandlerContext:
    return HandlerContext(job_id=7, attempt=1, payload={}, cancelled=threading.Event(),
                          deadline=time.monotonic() + 30, log=logging.getLogger("test"),
                          batch_id=3, issue_job_token=lambda: TOKEN)


def _text(ctx: HandlerContext) -> str:
    ctx.output.close()
    return b"".join(chunk for _, chunk in iter(ctx.output.take, None)).decode()


def test_a_token_issued_after_output_began_is_masked_from_then_on_and_nothing_is_lost() -> None:
    ctx = _ctx()
    ctx.output.write("started, half a line: ")
    assert ctx.job_token == TOKEN
    ctx.output.write(f"CRONPLANE_JOB_TOKEN={TOKEN}\nend\n")
    assert _text(ctx) == "started, half a line: CRONPLANE_JOB_TOKEN=***\nend\n"
    assert ctx.mask({"printed": TOKEN, "error": f"x {TOKEN}"}) == {"printed": "***",
                                                                  "error": "x ***"}


def test_a_token_issued_before_any_output_is_masked_too() -> None:
    ctx = _ctx()
    token = ctx.job_token
    assert token == TOKEN
    ctx.output.write(f"{token}\n")
    assert _text(ctx) == "***\n"


def test_a_job_outside_a_batch_has_no_token_and_masks_nothing() -> None:
    ctx = _ctx()
    ctx.batch_id = None
    assert ctx.job_token is None and ctx.secret_values == ()
    ctx.output.write(f"{TOKEN}\n")
    assert _text(ctx) == f"{TOKEN}\n"
