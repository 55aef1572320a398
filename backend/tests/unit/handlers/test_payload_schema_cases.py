"""The console and the API decide alike: every case the payload editor is tested on
(``frontend/src/lib/payload-schema-cases.json``, run by ``json-schema.test.ts``) goes through the
API's own check (``payload_check.check_payload``: Draft202012Validator, secret references as
strings of unknown content), and is refused here exactly when the console shows a message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from cronplane.handlers.payload_check import check_payload
from cronplane.handlers.registry import HandlerSpec

REPO = Path(__file__).resolve().parents[4]
CASES: list[dict[str, Any]] = json.loads(
    (REPO / "frontend" / "src" / "lib" / "payload-schema-cases.json").read_text())["cases"]


def test_the_cases_cover_both_outcomes() -> None:
    assert len(CASES) >= 20
    assert any(case["console"] for case in CASES) and any(not case["console"] for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_api_agrees_with_the_console(case: dict[str, Any]) -> None:
    Draft202012Validator.check_schema(case["schema"])  # a schema the registry would accept
    spec = HandlerSpec(name="case", fn=lambda ctx: None, schema=case["schema"])
    problems = check_payload(spec, case["payload"], None, exists=lambda name: True)
    if case["console"]:
        assert problems, "the console refuses this payload but the API would accept it"
    else:
        assert problems == [], "the console accepts this payload but the API would refuse it"
