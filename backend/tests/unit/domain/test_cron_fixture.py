"""The shared cron fixture (fixtures/cron/cases.json) against the backend parser.

The console's Vitest suite reads the same file; together they keep the client's instant
feedback and the backend's verdict on one supported subset.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cronplane.domain.cron import CronError, CronExpression, describe

FIXTURE = Path(__file__).resolve().parents[4] / "fixtures" / "cron" / "cases.json"
CASES: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))["cases"]


def _case_id(case: dict[str, Any]) -> str:
    return repr(case["expression"])[:60]


def test_fixture_has_enough_cases_of_both_kinds() -> None:
    valid = [case for case in CASES if case["valid"]]
    invalid = [case for case in CASES if not case["valid"]]
    assert len(CASES) >= 60, f"the shared fixture should hold at least 60 cases, has {len(CASES)}"
    assert len(valid) >= 20 and len(invalid) >= 20, "both positives and negatives are needed"


def test_fixture_cases_are_unique_and_complete() -> None:
    expressions = [case["expression"] for case in CASES]
    assert len(expressions) == len(set(expressions)), "duplicate expressions in the fixture"
    for case in CASES:
        assert set(case) - {"api_english"} == {
            "expression", "valid", "canonical", "field", "english", "note"}, case
        assert case["note"], f"every case says why it matters: {case['expression']!r}"
        if case["valid"]:
            assert case["canonical"] is not None and case["field"] is None, case
        else:
            assert case["canonical"] is None, case


@pytest.mark.parametrize("case", [c for c in CASES if c["valid"]], ids=_case_id)
def test_valid_fixture_case_parses_to_its_canonical_form(case: dict[str, Any]) -> None:
    expression = CronExpression.parse(case["expression"])
    assert expression.canonical == case["canonical"], case["note"]
    # The console (cronstrue) must say ``english``; the API (cron-descriptor) says the same, or the
    # case's ``api_english`` where the two libraries phrase one meaning differently.
    assert describe(expression) == case.get("api_english", case["english"]), case["note"]
    assert CronExpression.parse(expression.canonical) == expression, (
        "the canonical form must parse back to itself"
    )


@pytest.mark.parametrize("case", [c for c in CASES if not c["valid"]], ids=_case_id)
def test_invalid_fixture_case_is_rejected_naming_its_field(case: dict[str, Any]) -> None:
    with pytest.raises(CronError) as caught:
        CronExpression.parse(case["expression"])
    assert caught.value.field == case["field"], (
        f"{case['note']}: expected the error to name field {case['field']}, "
        f"got {caught.value.field} ({caught.value})"
    )
    if case["field"] is not None:
        assert str(caught.value).startswith(f"field {case['field']} ("), str(caught.value)
