"""The role matrix, generated from the live OpenAPI document: every operation states its role
(``x-required-role``), and the server enforces exactly that for no one, VIEWER, OPERATOR and ADMIN.

A new endpoint without ``x-required-role`` fails here: add ``@requires(Role.X)`` (or mark it
public with ``x-required-role: PUBLIC``). Path parameters name things that do not exist, and bodies
are empty, so an allowed call answers 404/422 (anything but 401/403); a refused one changes no
table.
"""

from __future__ import annotations

from contextlib import nullcontext

import pytest

from tests.support.accounts import add_user, mint_session
from tests.support.apps import UNREACHABLE_DATABASE, make_app
from tests.support.db_state import assert_unchanged

METHODS = ("get", "post", "put", "patch", "delete")
RANKS = {"VIEWER": 1, "OPERATOR": 2, "ADMIN": 3}
CALLERS = (None, "VIEWER", "OPERATOR", "ADMIN")


def _spec(app=None) -> dict:
    app = app or make_app(UNREACHABLE_DATABASE)
    return app.test_client().get("/api/v1/openapi.json").json


def _operations(spec: dict | None = None) -> list[tuple[str, str, dict]]:
    spec = spec or _spec()
    # Path parameters may be declared on the path item rather than on each operation.
    return [(path, method, {**op, "parameters": item.get("parameters", []) + op.get("parameters", [])})
            for path, item in sorted(spec["paths"].items())
            for method, op in item.items() if method in METHODS]


OPERATIONS = _operations()


@pytest.fixture(scope="module")
def accounts(app):
    return {role: add_user(app, role) for role in RANKS}


def _url(path: str, op: dict) -> str:
    url = path
    for param in op.get("parameters", []):
        if param.get("in") != "path":
            continue
        kind = param.get("schema", {}).get("type")
        value = "999999999" if kind == "integer" else "no-such-thing"
        url = url.replace("{" + param["name"] + "}", value)
    return url


def test_the_document_lists_operations() -> None:
    assert len(OPERATIONS) >= 15, "the OpenAPI document looks empty"


def test_an_operation_without_a_role_is_caught() -> None:
    """The guard itself: a view registered without @requires has no x-required-role."""
    from flask.views import MethodView
    from flask_smorest import Blueprint

    app = make_app(UNREACHABLE_DATABASE)
    stray = Blueprint("stray", __name__)

    @stray.route("/stray")
    class Stray(MethodView):
        @stray.response(200)
        def get(self) -> dict:
            return {}

    app.extensions["cronplane.api"].register_blueprint(stray, url_prefix="/api/v1")
    unmarked = [f"{m} {p}" for p, m, op in _operations(_spec(app))
                if op.get("x-required-role") is None]
    assert unmarked == ["get /api/v1/stray"]


@pytest.mark.parametrize(("path", "method", "op"), OPERATIONS,
                         ids=[f"{m.upper()} {p}" for p, m, _ in OPERATIONS])
def test_operation_enforces_its_documented_role(app, accounts, database_url, path, method,
                                                op) -> None:
    required = op.get("x-required-role")
    assert required in ("PUBLIC", *RANKS), (
        f"{method.upper()} {path} has no expected role (x-required-role={required!r}): "
        "decorate the view with @requires(Role.X) or mark it PUBLIC")
    client = app.test_client(use_cookies=False)
    url = _url(path, op)
    kwargs = {"json": {}} if "requestBody" in op else {}
    for caller in CALLERS:
        headers = {}
        if caller is not None:
            headers["Authorization"] = f"Bearer {mint_session(app, accounts[caller])}"
        refused = required != "PUBLIC" and (caller is None or RANKS[caller] < RANKS[required])
        with assert_unchanged(database_url) if refused else nullcontext():
            status = client.open(url, method=method.upper(), headers=headers, **kwargs).status_code
        who = caller or "no one"
        if required == "PUBLIC":
            assert status != 403, f"{method.upper()} {path} is public but refused {who}"
            if caller is None and "x-credential" not in op:
                assert status != 401, f"{method.upper()} {path} is public but asked for credentials"
        elif caller is None:
            assert status == 401, f"{method.upper()} {path} answered {status} to no one"
        elif RANKS[caller] < RANKS[required]:
            assert status == 403, (f"{method.upper()} {path} needs {required} but answered "
                                   f"{status} to {caller}")
        else:
            assert status not in (401, 403), (f"{method.upper()} {path} needs {required} but "
                                               f"refused {caller} with {status}")
