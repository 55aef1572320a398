"""The command-line client is checked against the OpenAPI document: every call it makes is an
operation the server documents, every body field it sends is one the schema accepts, and the
schedules file's defaults are the schema's own fields."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from cronplane.client import schedules_as_code

REPO = Path(__file__).resolve().parents[3]
CLIENT = REPO / "backend" / "src" / "cronplane" / "client"
SPEC = json.loads((REPO / "frontend" / "openapi.json").read_text())


def _calls() -> set[tuple[str, str]]:
    """(METHOD, path template) of every ``request("METHOD", "/path…")`` in the client modules;
    f-string placeholders become ``{…}``."""
    found = set()
    for module in CLIENT.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("request", "get_all")):
                continue
            args = node.args
            if node.func.attr == "get_all":
                method, path_node = "GET", args[0]
            else:
                method, path_node = ast.literal_eval(args[0]), args[1]
            if isinstance(path_node, ast.Name):
                continue  # the generic helper forwarding its caller's path
            if isinstance(path_node, ast.JoinedStr):
                path = "".join(part.value if isinstance(part, ast.Constant) else "{}"
                               for part in path_node.values)
            else:
                path = ast.literal_eval(path_node)
            found.add((method, path))
    return found


def _documented() -> set[tuple[str, str]]:
    return {(method.upper(), re.sub(r"\{[^}]+\}", "{}", path.removeprefix("/api/v1")))
            for path, item in SPEC["paths"].items() for method in item}


def test_every_call_the_client_makes_is_a_documented_operation() -> None:
    calls = _calls()
    assert len(calls) >= 12, calls  # the parser found the calls (jobs, schedules, apply)
    assert calls <= _documented(), sorted(calls - _documented())


def test_schedule_file_fields_are_fields_the_api_accepts() -> None:
    accepted = set(SPEC["components"]["schemas"]["ScheduleUpdate"]["properties"])
    assert set(schedules_as_code.FIELDS) <= accepted
    assert set(schedules_as_code.DEFAULTS) <= set(schedules_as_code.FIELDS)
    create = SPEC["components"]["schemas"]["ScheduleCreate"]
    assert set(schedules_as_code.REQUIRED) == set(create.get("required", [])) - {"timezone"}
