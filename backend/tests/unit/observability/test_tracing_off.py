"""Without OTEL_EXPORTER_OTLP_ENDPOINT, tracing costs nothing: the SDK is never imported and
every entry point answers the shared no-op."""

from __future__ import annotations

import os
import subprocess
import sys

from cronplane.observability import tracing


def test_without_an_endpoint_the_sdk_is_never_imported() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    code = ("import sys\n"
            "from cronplane.observability import tracing\n"
            "import cronplane.api.app, cronplane.execution.worker, cronplane.management.jobs\n"
            "assert tracing.configure() is False\n"
            "tracing.start_create('default', 'default', trigger='api').finish(1)\n"
            "leaked = sorted(m for m in sys.modules if m.startswith('opentelemetry'))\n"
            "assert not leaked, leaked\n")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_the_off_path_returns_the_shared_no_op() -> None:
    if tracing.enabled():  # pragma: no cover - only when the suite runs with an endpoint
        return
    assert tracing.start_create("p", "q", trigger="api") is tracing.NO_SPAN
    assert tracing.start_process(job_id=1, attempt=1, project="p", queue="q", handler="noop",
                                 trace_context=None) is None
    assert tracing.trace_id_of("00-" + "a" * 32 + "-" + "b" * 16 + "-01") == "a" * 32
    assert tracing.trace_id_of(None) is None
