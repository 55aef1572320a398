"""What job output costs a job that writes nothing, and what writing costs: in-process, no database.

    python -m bench output [--jobs 200000]

* Quiet job: the worker's per-job output work for a handler that writes nothing — the context's
  ``open_output`` (the sink's writer, made only on first use) and the check at the attempt's end —
  against a context built without any output (the state before job output existed). Reported
  in CPU microseconds per job, to set beside the drain's CPU per job
  (``python -m bench queue --only drain``).
* Writing job: one ``ctx.output.line()`` of 80 characters per job, masked with one secret, and
  the sink's take of the pending bytes (the flush statement itself is one per 250 ms, not per job).
"""

from __future__ import annotations

import argparse
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from cronplane.execution.output_sink import OutputSink
from cronplane.handlers.context import HandlerContext
from cronplane.storage.output_store import OutputStore


@dataclass
class _ContextWithoutOutput:
    """HandlerContext's fields before job output (07cae48), for the baseline."""

    job_id: int
    attempt: int
    payload: dict[str, Any]
    cancelled: threading.Event
    deadline: float
    log: logging.Logger
    settings: Any = None
    maintenance: Any = None
    reason: list[str] = field(default_factory=list)
    monotonic: Callable[[], float] = time.monotonic
    secret_values: tuple[str, ...] = ()


def _per_job(cases: dict[str, Callable[[int], object]], jobs: int) -> dict[str, float]:
    """CPU microseconds per call of each case (this thread's CPU time, so waiting for a core on
    a loaded machine is not counted); cases interleaved, the best of seven rounds each."""
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(7):
        for name, make in cases.items():
            started = time.thread_time()
            for n in range(jobs):
                make(n)
            best[name] = min(best[name], time.thread_time() - started)
    return {name: seconds / jobs * 1e6 for name, seconds in best.items()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench output")
    parser.add_argument("--jobs", type=int, default=200_000)
    args = parser.parse_args(argv)
    sink = OutputSink(OutputStore(db=None))  # type: ignore[arg-type] - never flushed here
    log = logging.getLogger("bench")

    def before(n: int) -> object:
        return _ContextWithoutOutput(job_id=n, attempt=1, payload={}, cancelled=threading.Event(),
                                     deadline=0.0, log=log)

    def quiet(n: int) -> object:
        # What the worker does per job (worker._dispatch and _finish_output).
        ctx = HandlerContext(job_id=n, attempt=1, payload={}, cancelled=threading.Event(),
                             deadline=0.0, log=log, open_output=partial(sink.output, n))
        opened = ctx.opened_output
        if opened is not None:
            sink.finish(opened)
        return ctx

    line = "x" * 79

    def writing(n: int) -> object:
        ctx = HandlerContext(job_id=n, attempt=1, payload={}, cancelled=threading.Event(),
                             deadline=0.0, log=log, open_output=partial(sink.output, n),
                             secret_values=("s3cr3t",))
        ctx.output.line(line)
        sink._pending.pop(ctx.output, None)
        ctx.output.take()
        ctx.output.close()
        return ctx

    cost = _per_job({"before": before, "quiet": quiet, "writing": writing}, args.jobs)
    print(f"context without output: {cost['before']:.2f} us/job; a job that writes nothing: "
          f"{cost['quiet']:.2f} us/job (+{cost['quiet'] - cost['before']:.2f} us); one masked "
          f"80-char line: {cost['writing']:.2f} us/job "
          f"(+{cost['writing'] - cost['before']:.2f} us)", flush=True)
    return 0
