"""OpenTelemetry traces, following the messaging conventions (docs/observability.md).

Off unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``…_TRACES_ENDPOINT``) is set: then every call
here is a check of one module global and returns a shared no-op, and the SDK is never imported
(nothing exported, nothing slower). On, the process gets a TracerProvider with a batching
OTLP/HTTP exporter configured by the standard ``OTEL_*`` variables (``OTEL_SERVICE_NAME``
default ``cronplane``).

The shapes (docs/adr/0030-traces-and-usage.md):
* ``create`` — a PRODUCER span for each job created, started before the insert so its W3C
  ``traceparent`` is stored with the job (``jobs.trace_context``) and any process can link to it.
* ``process`` — a CONSUMER span for each attempt, the root of a trace of its own, LINKED to the
  create span (never its child): a retry hours later is not nested in the enqueue's trace.
* ``fire`` — the scheduler's fire of one schedule at one fire time, with the fencing token; the
  create span of the job it makes is its child.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

SYSTEM = "cronplane"
_ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")

_tracer: Any = None  # the SDK tracer once configured; None: tracing is off
# The API's names, bound once by configure(): an attempt's span costs a few microseconds less
# than importing them per call (the drain with tracing on pays this per job; bench/RESULTS.md).
_api: Any = None


def enabled() -> bool:
    return _tracer is not None


def configure(environ: Mapping[str, str] | None = None) -> bool:
    """Install the SDK when an OTLP endpoint is configured (idempotent); True when tracing."""
    global _tracer  # noqa: PLW0603 - one provider per process, set once
    env = os.environ if environ is None else environ
    if _tracer is not None:
        return True
    if not any(env.get(name) for name in _ENDPOINT_VARIABLES):
        return False
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or SYSTEM})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _bind_api()
    _tracer = trace.get_tracer("cronplane")
    return True


def _bind_api() -> None:
    global _api  # noqa: PLW0603 - bound once, with the provider
    from types import SimpleNamespace

    from opentelemetry import trace
    from opentelemetry.context import Context
    from opentelemetry.trace import Status, StatusCode

    _api = SimpleNamespace(trace=trace, Context=Context, Status=Status, StatusCode=StatusCode,
                           CONSUMER=trace.SpanKind.CONSUMER, sampled=trace.TraceFlags(1),
                           unsampled=trace.TraceFlags(0))


def _linked_context(traceparent: str | None) -> Any:
    """The create span's context from its stored ``traceparent`` (None when absent or not
    version 00 of W3C Trace Context), parsed here rather than by the propagator's regex and
    context round trip: one attempt pays this per job."""
    if not traceparent or len(traceparent) != 55 or not traceparent.startswith("00-"):
        return None
    try:
        trace_id = int(traceparent[3:35], 16)
        span_id = int(traceparent[36:52], 16)
        flags = int(traceparent[53:55], 16)
    except ValueError:
        return None
    if not trace_id or not span_id:
        return None
    return _api.trace.SpanContext(trace_id, span_id, is_remote=True,
                                  trace_flags=_api.sampled if flags & 1 else _api.unsampled)


def shutdown() -> None:
    """Flush what is buffered (a process that exits otherwise loses its last spans)."""
    if _tracer is None:
        return
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    flush = getattr(provider, "force_flush", None)
    if flush is not None:
        flush()


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _job_attributes(project: str, queue: str, schedule_id: int | None,
                    schedule_version: int | None, fire_at: datetime | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {"messaging.system": SYSTEM,
                                  "messaging.destination.name": queue,
                                  "cronplane.project": project}
    if schedule_id is not None:
        attributes["cronplane.schedule.id"] = schedule_id
    if schedule_version is not None:
        attributes["cronplane.schedule.version"] = schedule_version
    if fire_at is not None:
        attributes["cronplane.fire.at"] = rfc3339(fire_at)
    return attributes


class CreateSpan:
    """A started ``create`` span: ``traceparent`` goes into the job's row, ``finish(job_id)``
    names the job and ends it (``finish(None)``: nothing was created, e.g. a replay)."""

    __slots__ = ("_span", "traceparent")

    def __init__(self, span: Any, traceparent: str | None) -> None:
        self._span = span
        self.traceparent = traceparent

    def finish(self, job_id: int | None) -> None:
        if self._span is None:
            return
        if job_id is not None:
            self._span.set_attribute("messaging.message.id", str(job_id))
        self._span.end()


NO_SPAN = CreateSpan(None, None)


def traceparent_of(span: Any) -> str:
    context = span.get_span_context()
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


def trace_id_of(traceparent: str | None) -> str | None:
    """The trace id in a stored ``traceparent`` (what the job API shows), None when untraced."""
    if not traceparent:
        return None
    parts = traceparent.split("-")
    return parts[1] if len(parts) == 4 and len(parts[1]) == 32 else None


def start_create(project: str, queue: str, *, trigger: str, schedule_id: int | None = None,
                 schedule_version: int | None = None, fire_at: datetime | None = None,
                 parent: Any = None) -> CreateSpan:
    """The ``create`` span of one job about to be inserted (NO_SPAN when tracing is off)."""
    tracer = _tracer
    if tracer is None:
        return NO_SPAN
    from opentelemetry import trace

    attributes = _job_attributes(project, queue, schedule_id, schedule_version, fire_at)
    attributes.update({"messaging.operation.name": "create",
                       "messaging.operation.type": "create", "cronplane.trigger": trigger})
    context = trace.set_span_in_context(parent) if parent is not None else None
    span = tracer.start_span(f"create {queue}", context=context, kind=trace.SpanKind.PRODUCER,
                             attributes=attributes)
    return CreateSpan(span, traceparent_of(span))


def start_fire(schedule_id: int, schedule_version: int | None, fire_at: datetime,
               fencing_token: int | None, project: str) -> Any:
    """The scheduler's fire of ``schedule_id`` at ``fire_at`` (None when off): the root of the
    fire's trace; the job's create span is its child. End it with ``end_span``."""
    tracer = _tracer
    if tracer is None:
        return None
    from opentelemetry import trace
    from opentelemetry.context import Context

    attributes: dict[str, Any] = {
        "messaging.system": SYSTEM, "cronplane.project": project,
        "cronplane.schedule.id": schedule_id, "cronplane.fire.at": rfc3339(fire_at)}
    if schedule_version is not None:
        attributes["cronplane.schedule.version"] = schedule_version
    if fencing_token is not None:
        attributes["cronplane.fencing_token"] = fencing_token
    return tracer.start_span("fire", context=Context(), kind=trace.SpanKind.INTERNAL,
                             attributes=attributes)


def end_span(span: Any) -> None:
    if span is not None:
        span.end()


def start_process(*, job_id: int, attempt: int, project: str, queue: str, handler: str,
                  trace_context: str | None, schedule_id: int | None = None,
                  schedule_version: int | None = None, fire_at: datetime | None = None) -> Any:
    """The ``process`` span of one attempt: a new trace, linked to the job's create span."""
    tracer = _tracer
    if tracer is None:
        return None
    api = _api
    created = _linked_context(trace_context)
    links = [api.trace.Link(created)] if created is not None else None
    attributes = _job_attributes(project, queue, schedule_id, schedule_version, fire_at)
    attributes.update({"messaging.operation.name": "process",
                       "messaging.operation.type": "process",
                       "messaging.message.id": str(job_id), "cronplane.attempt": attempt,
                       "cronplane.handler": handler})
    # An empty Context: the attempt's trace is its own, never the enqueuing request's.
    return tracer.start_span(f"process {queue}", context=api.Context(), kind=api.CONSUMER,
                             links=links, attributes=attributes)


def end_process(span: Any, status: str, error: str | None) -> None:
    if span is None:
        return
    span.set_attribute("cronplane.outcome", status)
    if status != "SUCCEEDED":
        span.set_status(_api.Status(_api.StatusCode.ERROR, (error or status)[:500]))
    span.end()


def current_trace_id() -> str | None:
    """The trace id of the span current in this thread (for log lines), None when off."""
    if _tracer is None:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    return f"{context.trace_id:032x}" if context.is_valid else None


@contextmanager
def use_span(span: Any) -> Iterator[None]:
    """Make ``span`` current in this thread (log lines and child spans see it)."""
    if span is None:
        yield
        return
    from opentelemetry import trace

    with trace.use_span(span, end_on_exit=False):
        yield


def start_server(method: str, headers: Mapping[str, str]) -> Any:
    """The SERVER span of one HTTP request, current in this thread until ``end_server``;
    continues the caller's trace when it sent a ``traceparent`` (None when off)."""
    tracer = _tracer
    if tracer is None:
        return None
    from opentelemetry import context, trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier = {"traceparent": headers.get("traceparent") or ""}
    if headers.get("tracestate"):
        carrier["tracestate"] = headers["tracestate"]
    parent = TraceContextTextMapPropagator().extract(carrier) if carrier["traceparent"] else None
    span = tracer.start_span(method, context=parent, kind=trace.SpanKind.SERVER,
                             attributes={"http.request.method": method})
    token = context.attach(trace.set_span_in_context(span))
    return span, token


def end_server(handle: Any, route: str | None, status: int) -> None:
    if handle is None:
        return
    from opentelemetry import context
    from opentelemetry.trace import Status, StatusCode

    span, token = handle
    if route:
        span.update_name(f"{span.name} {route}")
        span.set_attribute("http.route", route)
    span.set_attribute("http.response.status_code", status)
    if status >= 500:
        span.set_status(Status(StatusCode.ERROR))
    span.end()
    context.detach(token)
