"""cronplane's Flask answers exactly as Flask does, without the per-request raising and inspecting."""

from __future__ import annotations

import asyncio

import pytest
from werkzeug.datastructures import ImmutableMultiDict

from cronplane.api.flask_app import Arguments, CronplaneFlask


def test_arguments_read_as_werkzeugs_do() -> None:
    pairs = [("limit", "50"), ("status", "DEAD"), ("status", "CANCELLED"), ("q", "")]
    ours, theirs = Arguments(pairs), ImmutableMultiDict(pairs)
    for key in ("limit", "status", "q", "absent"):
        for default in (None, "fallback"):
            assert ours.get(key, default) == theirs.get(key, default)
            assert ours.get(key, default, type=int) == theirs.get(key, default, type=int)
        assert ours.getlist(key) == theirs.getlist(key)
    assert ours.get("absent") is None
    with pytest.raises(KeyError):
        ours["absent"]


def test_query_arguments_of_a_request_are_arguments() -> None:
    app = CronplaneFlask(__name__)
    with app.test_request_context("/?limit=5&limit=6"):
        from flask import request

        assert isinstance(request.args, Arguments)
        assert request.args.get("limit", type=int) == 5 and request.args.get("none", 1) == 1


def test_ensure_sync_returns_plain_functions_and_wraps_coroutines() -> None:
    app = CronplaneFlask(__name__)

    def plain() -> str:
        return "plain"

    async def later() -> str:
        await asyncio.sleep(0)
        return "later"

    class View:
        def get(self) -> str:
            return "method"

    assert app.ensure_sync(plain) is plain and app.ensure_sync(plain) is plain
    for _ in range(3):
        bound = View().get  # a new bound method each time, as MethodView makes per request
        assert app.ensure_sync(bound) is bound
    assert len(app._synchronous) == 2, "remembered per function, not per bound method"
    # Flask wraps a coroutine function with async_to_sync (asgiref, which cronplane does not
    # install): asked every time, never remembered.
    handed: list[object] = []
    app.async_to_sync = lambda func: handed.append(func) or (lambda: "wrapped")  # type: ignore[method-assign]
    assert app.ensure_sync(later)() == "wrapped" and app.ensure_sync(later)() == "wrapped"
    assert handed == [later, later]
    assert asyncio.run(later()) == "later"
