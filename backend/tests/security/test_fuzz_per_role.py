"""Issue 14 item 8: the schema-driven fuzzer (schemathesis) over the whole API as each role in
turn — VIEWER, OPERATOR, ADMIN, each with a real API token of its own — stateless (every
operation, valid and invalid input) and then stateful (sequences that follow the links
schemathesis infers between operations: create, then read, change, delete what was created).
No answer may be a 5xx. Bounded: two valid examples per operation and role, one invalid one as
ADMIN, six scenarios of eight steps per role (about 25 s of CPU in all).

API tokens, not sessions: the fuzzer calls ``/auth/logout`` too, and must not end its own run.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode

from cronplane.management.bootstrap import bootstrap_accounts
from tests.support.accounts import FAST_HASHING, add_user, bearer, mint_session
from tests.support.apps import context, make_app

ROLES = ("VIEWER", "OPERATOR", "ADMIN")
EXAMPLES = 2
SCENARIOS = 6
STEPS = 8
CHECKS = [not_a_server_error]


@pytest.fixture(scope="module")
def app(database_url: str):
    app = make_app(database_url, demo_personas=True)
    bootstrap_accounts(context(app), hashing=FAST_HASHING)
    yield app
    context(app).db.close()


@pytest.fixture(scope="module")
def tokens(app) -> dict[str, str]:
    client = app.test_client(use_cookies=False)
    found = {}
    for role in ROLES:
        account = add_user(app, role)
        created = client.post("/api/v1/tokens", headers=bearer(mint_session(app, account)),
                              json={"name": f"fuzz-{role.lower()}", "role": role})
        assert created.status_code == 201, created.get_data(as_text=True)
        found[role] = created.json["token"]
    return found


@pytest.fixture(scope="module")
def schema(app):
    return schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)


def _exercise(strategy: Any, headers: dict[str, str], examples: int) -> None:
    @given(case=strategy)
    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def exercise(case: Any) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS)

    exercise()


@pytest.mark.parametrize("role", ROLES)
def test_no_operation_answers_5xx_to_any_role(schema, tokens, role: str) -> None:
    headers = {"Authorization": f"Bearer {tokens[role]}"}
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 60, "the whole API, not a part of it"
    for operation in operations:
        # Below ADMIN most operations refuse before reading the body (``requires`` is the
        # outermost decorator), so invalid input only tells something new as ADMIN.
        modes = [GenerationMode.POSITIVE] + ([GenerationMode.NEGATIVE] if role == "ADMIN" else [])
        for mode in modes:
            try:
                _exercise(operation.as_strategy(generation_mode=mode), headers,
                          EXAMPLES if mode is GenerationMode.POSITIVE else 1)
            except Unsatisfiable:
                continue  # nothing to make invalid (no parameters, no body)
            except Exception as exc:  # collected, reported together below
                failures.append(f"{role} {operation.label} ({mode.value}): {exc}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("role", ROLES)
def test_no_sequence_of_calls_answers_5xx_to_any_role(schema, tokens, role: str) -> None:
    headers = {"Authorization": f"Bearer {tokens[role]}"}

    class Scenarios(schema.as_state_machine()):  # type: ignore[misc]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"headers": headers}

        def validate_response(self, response: Any, case: Any,
                              additional_checks: Any = None, **kwargs: Any) -> None:
            case.validate_response(response, checks=CHECKS)

    Scenarios.run(settings=settings(max_examples=SCENARIOS, stateful_step_count=STEPS,
                                    deadline=None, derandomize=True, database=None,
                                    suppress_health_check=list(HealthCheck)))
