"""cronplane's Flask: the framework's per-request work that raised or inspected on every request.

Profiling ``GET /jobs`` (issue 16) found two costs that say nothing about the request:

- ``MultiDict.get`` of an absent key raises and catches werkzeug's ``BadRequestKeyError`` (an
  HTTP exception, built with its description) — once per query argument a request leaves out,
  and webargs asks for every argument of the schema (nine on ``GET /jobs``).
- ``Flask.ensure_sync`` asks ``inspect.iscoroutinefunction`` about every view and hook (a dozen
  per request), though none of them can change.

Both are answered here with the same results, cheaper.
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType, MethodType
from typing import Any

from flask import Flask, Request
from werkzeug.datastructures import ImmutableMultiDict


class Arguments(ImmutableMultiDict[str, Any]):
    """Query and form arguments whose ``get`` of an absent key returns the default without the
    raise and catch underneath (the same answer)."""

    def get(self, key: Any, default: Any = None, type: Any = None) -> Any:  # type: ignore[override]
        if key not in self:  # the dict's own membership: no __getitem__, no exception
            return default
        return super().get(key, default, type)


class CronplaneRequest(Request):
    parameter_storage_class = Arguments


class CronplaneFlask(Flask):
    request_class = CronplaneRequest

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._synchronous: set[Callable[..., Any]] = set()  # plain functions, never wrapped

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        """Flask's answer, remembered per function. A bound method (a ``MethodView``'s handler,
        a new object on every request) is remembered by its function, never by itself, so the
        cache is bounded by the code."""
        code: Any = func.__func__ if type(func) is MethodType else func
        if type(code) is not FunctionType:
            return super().ensure_sync(func)  # a partial, a callable object: ask every time
        if code in self._synchronous:
            return func  # a plain function, as it was the first time
        wrapped = super().ensure_sync(func)
        if wrapped is func:
            self._synchronous.add(code)
        return wrapped
