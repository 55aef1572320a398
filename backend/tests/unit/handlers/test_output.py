"""A handler's output stream: masked at write, byte offsets that survive dropping, closed means
closed."""

from __future__ import annotations

import logging
import threading
import time

from cronplane.handlers.context import HandlerContext
from cronplane.handlers.output import Output


def _ctx(**kwargs: object) -> HandlerContext:
    return HandlerContext(job_id=1, attempt=1, payload={}, cancelled=threading.Event(),
                          deadline=time.monotonic() + 30, log=logging.getLogger("test"),
                          **kwargs)  # type: ignore[arg-type]


def test_secret_values_are_masked_when_written_even_if_known_only_after_the_context() -> None:
    ctx = _ctx()
    ctx.use_secrets(("hunter2",))  # the worker resolves secrets after building the context
    ctx.output.line("password=hunter2 ok, and a long enough tail to be released")
    first = ctx.output.take()
    assert first is not None and first[1].startswith(b"password=*** ok"), \
        "a secret value must never be buffered unmasked"
    ctx.output.close()
    rest = ctx.output.take()
    # A finished line is decided at once (no form spans a line break); closing gives up the rest.
    assert (first[1] + (rest[1] if rest else b"")).endswith(b"released\n"), \
        "closing gives up the held-back tail"


def test_a_secret_split_across_two_writes_is_masked_and_nothing_of_it_is_pending() -> None:
    ctx = _ctx()
    ctx.use_secrets(("hunter2-the-long-one",))
    ctx.output.write("the value is hunter2-")
    early = ctx.output.take()
    assert early is None or b"hunter" not in early[1], early
    ctx.output.write("the-long-one, done\n")
    ctx.output.close()
    whole = b"".join(chunk for _, chunk in iter(ctx.output.take, None))
    whole = (early[1] if early else b"") + whole
    assert whole == b"the value is ***, done\n", whole


def test_take_returns_pending_bytes_with_their_offset_and_clears_them() -> None:
    out = Output()
    out.write("héllo\n")  # é is two bytes: offsets count bytes
    assert out.take() == (0, "héllo\n".encode())
    assert out.take() is None
    out.write("more")
    assert out.take() == (7, b"more")
    assert out.written == 11


def test_a_burst_beyond_keep_drops_its_oldest_bytes_but_offsets_stay_true() -> None:
    out = Output(keep=10)
    out.write("0123456789abcdef")
    assert out.take() == (6, b"6789abcdef"), "the kept bytes must carry their real offset"
    assert out.written == 16


def test_writes_after_close_are_ignored() -> None:
    out = Output()
    out.write("a")
    out.close()
    out.write("b")
    assert out.take() == (0, b"a")


def test_the_first_pending_byte_registers_once_until_taken() -> None:
    calls: list[Output] = []
    out = Output(on_first_pending=calls.append)
    out.write("a")
    out.write("b")
    assert len(calls) == 1, "a writer with pending bytes is registered once"
    out.take()
    out.write("c")
    assert len(calls) == 2, "after a take the next write must register again"


def test_nothing_written_registers_nothing() -> None:
    calls: list[Output] = []
    out = Output(on_first_pending=calls.append)
    out.write("")
    assert calls == [] and out.take() is None


def test_a_finished_line_is_not_held_back_while_the_command_waits() -> None:
    ctx = _ctx()
    ctx.use_secrets(("a-secret-long-enough-to-hold-back-a-lot-of-output" * 4,))
    ctx.output.write("".join(f"line {i}\n" for i in range(1, 121)))
    shown = ctx.output.take()
    assert shown is not None and shown[1].endswith(b"line 120\n"), \
        "a live tail must show every finished line while the command still runs"
