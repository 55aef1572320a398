import threading
import time

import pytest

from cronplane.handlers import Cancelled, HandlerContext, Registry, default_registry
from cronplane.handlers.registry import BUILTIN_PACKAGE
from tests.support.waiting import RecordingEvent


def make_ctx(payload: dict, seconds: float = 5.0) -> HandlerContext:
    import logging

    return HandlerContext(job_id=1, attempt=1, payload=payload, cancelled=threading.Event(),
                          deadline=time.monotonic() + seconds, log=logging.getLogger("t"))


def test_builtins_are_registered_with_a_schema_and_timeout() -> None:
    names = {spec.name for spec in default_registry()}
    assert {"noop", "sleep", "fail", "http.request", "shell.command",
            "maintenance.purge_history"} <= names
    for spec in default_registry():
        assert spec.schema.get("type") == "object", spec.name
        assert 1 <= spec.timeout <= 86400


def test_every_builtin_schema_is_a_valid_draft_2020_12_schema() -> None:
    # The registry does not check the built-ins' schemas when they register (a worker's start-up
    # does not import jsonschema): this test is their check.
    from jsonschema import Draft202012Validator

    builtins = [spec for spec in default_registry() if spec.fn.__module__.startswith(
        BUILTIN_PACKAGE)]
    assert len(builtins) >= 6, [spec.name for spec in builtins]
    for spec in builtins:
        Draft202012Validator.check_schema(spec.schema)


def test_a_handler_outside_cronplane_has_its_schema_checked_when_it_registers() -> None:
    from jsonschema.exceptions import SchemaError

    def mine(ctx: HandlerContext) -> None: ...

    with pytest.raises(SchemaError):
        Registry().handler("mine", schema={"type": 12})(mine)


def test_payload_validation_reports_each_problem_with_its_path() -> None:
    sleep = default_registry().get("sleep")
    assert sleep is not None
    assert sleep.validate({"seconds": 1}) == []
    problems = sleep.validate({"seconds": "x", "extra": 1})
    assert any(p.startswith("seconds:") for p in problems)
    assert any("extra" in p for p in problems)
    http = default_registry().get("http.request")
    assert http is not None
    assert http.validate({"method": "GET", "url": "file:///etc/passwd"})


def test_shell_command_exists_only_when_enabled() -> None:
    class Off:
        shell_commands = ()

    class On:
        shell_commands = ("/bin/echo",)

    assert "shell.command" not in {s.name for s in default_registry().available(Off())}
    assert "shell.command" in {s.name for s in default_registry().available(On())}


def test_registry_rejects_duplicates_and_bad_schemas() -> None:
    registry = Registry()

    @registry.handler("x", schema={"type": "object"})
    def x(ctx: HandlerContext) -> None: ...

    with pytest.raises(ValueError):
        @registry.handler("x")
        def y(ctx: HandlerContext) -> None: ...

    with pytest.raises(Exception):
        registry.handler("z", schema={"type": 12})(x)


def test_sleep_waits_on_the_cancel_event_and_stops_when_it_is_set() -> None:
    sleep = default_registry().get("sleep")
    assert sleep is not None
    ctx = make_ctx({"seconds": 30})
    ctx.cancelled = RecordingEvent()
    assert sleep.fn(ctx) == {"slept": 30.0}
    assert ctx.cancelled.waits == [30.0], "it sleeps by waiting on the cancel event"
    ctx.cancel("cancel requested")
    with pytest.raises(Cancelled):
        sleep.fn(ctx)


def test_shell_command_runs_argv_without_a_shell() -> None:
    class On:
        shell_commands = ("/bin/echo",)

    spec = default_registry().get("shell.command")
    assert spec is not None
    ctx = make_ctx({"argv": ["/bin/echo", "$HOME; rm -rf /"]})
    ctx.settings = On()
    result = spec.fn(ctx)
    assert result["stdout"].strip() == "$HOME; rm -rf /"
    ctx.settings = type("Off", (), {"shell_commands": ()})()
    with pytest.raises(Exception, match="disabled"):
        spec.fn(ctx)
