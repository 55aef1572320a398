"""The handler registry: what job types exist, their payload schema, timeout and retry policy.

Built-in handlers register with ``@handler(...)`` when their module is imported; third-party
packages publish callables (or modules) under the entry-point group ``cronplane.handlers`` and are
loaded once, on first use of ``default_registry()``. Payloads are validated against the handler's
JSON Schema at submission (management) so a bad payload is a 422, never a run-time failure.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Literal

from cronplane.domain.backoff import DEFAULT_BACKOFF, Backoff
from cronplane.domain.limits import DEFAULT_MAX_ATTEMPTS, DEFAULT_TIMEOUT_SECONDS
from cronplane.handlers.context import HandlerContext

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "cronplane.handlers"
HandlerFn = Callable[[HandlerContext], Any]
# A check beyond the schema, run at submission with the settings: (payload, settings) → messages.
PayloadCheck = Callable[[dict[str, Any], Any], list[str]]
OBJECT_SCHEMA: dict[str, Any] = {"type": "object"}
HandlerScope = Literal["project", "instance"]
INSTANCE_PREFIXES = ("maintenance.",)
# The built-in handlers' schemas are checked by a test (test_registry), not at each registration:
# a worker validates no payload, and jsonschema's import with checking the schemas was a tenth of
# its start-up before the first claim (issue 43). Every other handler's schema is checked when
# it registers, so a bad one fails there, as before.
BUILTIN_PACKAGE = "cronplane.handlers."


def handler_scope(name: str, declared: HandlerScope) -> HandlerScope:
    return "instance" if name.startswith(INSTANCE_PREFIXES) else declared


@dataclass(frozen=True)
class HandlerSpec:
    name: str
    fn: HandlerFn
    schema: dict[str, Any]
    timeout: int = DEFAULT_TIMEOUT_SECONDS
    description: str = ""
    backoff: Backoff = DEFAULT_BACKOFF
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    # Name of a Settings field (truthy = on) that must be true for this handler to exist at all
    # (shell.command needs CRONPLANE_SHELL_COMMANDS to list programs).
    requires_setting: str | None = None
    # Run after the schema passed (http.request refuses a literal denied host here → 422).
    check: PayloadCheck | None = None
    # "instance": its effect reaches beyond one project (shell.command runs programs on the
    # shared workers, maintenance.* tidies the installation), so only an instance ADMIN may put
    # it in a schedule or submit it by hand, in any project (management/scope.py). Triggering a
    # schedule that names it needs only the schedule's trigger rights. ``maintenance.*`` is
    # always "instance", whoever registers it.
    scope: HandlerScope = "project"

    def enabled(self, settings: Any) -> bool:
        if self.requires_setting is None:
            return True
        return bool(getattr(settings, self.requires_setting, False))

    def validate(self, payload: Any, settings: Any = None,
                 opaque: frozenset[tuple[str | int, ...]] = frozenset()) -> list[str]:
        """Every schema violation as '<path>: <what was expected>' (then the spec's own check);
        empty when the payload is valid. A message never shows a value of the payload (it may be
        a secret, or echo one): only the path and the schema's expectation.

        ``opaque``: paths whose value is not known at submission (secret references, validated
        as strings): only their type is checked; the rest is checked when the attempt runs."""
        validator = _validator(self.schema)
        messages = []
        for error in sorted(validator.iter_errors(payload), key=lambda e: list(e.absolute_path)):
            where = tuple(error.absolute_path)
            if where in opaque and error.validator != "type":
                continue
            path = "/".join(str(p) for p in where)
            text = expectation(error)
            messages.append(f"{path}: {text}" if path else text)
        if messages or self.check is None:
            return messages
        shown = {"/".join(str(p) for p in where) for where in opaque}
        return [m for m in self.check(payload, settings) if m.split(":", 1)[0] not in shown]


def expectation(error: Any) -> str:
    """What the schema expected, in words, from a jsonschema error, without the instance
    (jsonschema's own message quotes it with ``repr``)."""
    kind, wanted = error.validator, error.validator_value
    if kind == "type":
        return f"expected {' or '.join(wanted) if isinstance(wanted, list) else wanted}"
    if kind in ("required", "additionalProperties", "dependentRequired"):
        return str(error.message)  # names keys the caller wrote, never a value
    if kind == "enum":
        return "expected one of " + ", ".join(map(str, wanted))[:300]
    if kind == "const":
        return f"expected {str(wanted)[:100]}"
    if kind == "pattern":
        return f"expected a string matching {wanted}"
    if kind in ("oneOf", "anyOf"):
        return "expected one of the allowed forms"
    if kind == "not":
        return "expected a different value"
    return f"expected {kind} {str(wanted)[:100]}"


_VALIDATORS: dict[int, Draft202012Validator] = {}


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    key = id(schema)
    validator = _VALIDATORS.get(key)
    if validator is None:
        from jsonschema import Draft202012Validator

        validator = Draft202012Validator(schema)
        _VALIDATORS[key] = validator
    return validator


class Registry:
    def __init__(self) -> None:
        self._specs: dict[str, HandlerSpec] = {}
        self._lock = threading.Lock()

    def register(self, spec: HandlerSpec) -> HandlerSpec:
        if not spec.fn.__module__.startswith(BUILTIN_PACKAGE):
            from jsonschema import Draft202012Validator

            Draft202012Validator.check_schema(spec.schema)
        if not 1 <= spec.timeout <= 86400:
            raise ValueError(f"handler {spec.name!r}: timeout must be 1..86400 seconds")
        if spec.scope != handler_scope(spec.name, spec.scope):
            spec = replace(spec, scope=handler_scope(spec.name, spec.scope))
        with self._lock:
            existing = self._specs.get(spec.name)
            if existing is not None and existing.fn is not spec.fn:
                raise ValueError(f"handler {spec.name!r} is already registered")
            self._specs[spec.name] = spec
        return spec

    def get(self, name: str) -> HandlerSpec | None:
        return self._specs.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[HandlerSpec]:
        return iter(sorted(self._specs.values(), key=lambda s: s.name))

    def available(self, settings: Any) -> list[HandlerSpec]:
        return [spec for spec in self if spec.enabled(settings)]

    def handler(self, name: str, *, schema: dict[str, Any] | None = None,
                timeout: int = DEFAULT_TIMEOUT_SECONDS, description: str = "",
                backoff: Backoff | None = None, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                requires_setting: str | None = None,
                check: PayloadCheck | None = None,
                scope: HandlerScope = "project") -> Callable[[HandlerFn], HandlerFn]:
        def register(fn: HandlerFn) -> HandlerFn:
            self.register(HandlerSpec(
                name=name, fn=fn, schema=schema if schema is not None else OBJECT_SCHEMA,
                timeout=timeout, description=description or (fn.__doc__ or "").strip(),
                backoff=backoff or DEFAULT_BACKOFF, max_attempts=max_attempts,
                requires_setting=requires_setting, check=check,
                scope=handler_scope(name, scope)))
            return fn
        return register


REGISTRY = Registry()


def handler(name: str, *, schema: dict[str, Any] | None = None,
            timeout: int = DEFAULT_TIMEOUT_SECONDS, description: str = "",
            backoff: Backoff | None = None, max_attempts: int = 3,
            requires_setting: str | None = None,
            check: PayloadCheck | None = None,
            scope: HandlerScope = "project") -> Callable[[HandlerFn], HandlerFn]:
    """Register a handler in the process-wide registry."""
    return REGISTRY.handler(name, schema=schema, timeout=timeout, description=description,
                            backoff=backoff, max_attempts=max_attempts,
                            requires_setting=requires_setting, check=check,
                            scope=scope)


_loaded = False
_load_lock = threading.Lock()


def default_registry() -> Registry:
    """The process-wide registry with the built-ins and every installed entry point loaded."""
    global _loaded  # noqa: PLW0603 - one lazy load per process
    if _loaded:
        return REGISTRY
    with _load_lock:
        if not _loaded:
            from cronplane.handlers import builtin  # noqa: F401 - registers built-ins

            _load_entry_points(REGISTRY)
            _loaded = True
    return REGISTRY


def _load_entry_points(registry: Registry) -> None:
    # An entry point names a module (which registers with @handler on import) or a HandlerSpec.
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = ep.load()
        except Exception:
            log.exception("could not load handler entry point %s", ep.name)
            continue
        if isinstance(loaded, HandlerSpec):
            registry.register(loaded)
