"""Property-based run of the management API against its own OpenAPI document (schemathesis).

Every operation of this API's resources is called with generated (valid and invalid) input,
authenticated with a real access token of the role its ``x-required-role`` names, and every
response must be a non-5xx answer that its documented status codes, media type and schema
allow. Bounded (a few examples per operation) so it stays a couple of minutes at most.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.integration.api.job_seed import insert_job, insert_schedule
from tests.support.accounts import add_user, tokens_for
from tests.support.apps import close_app, make_app
from tests.support.examples import examples

MINE = ("/api/v1/schedules", "/api/v1/jobs", "/api/v1/handlers", "/api/v1/cron",
        "/api/v1/stats", "/api/v1/chaos")
EXAMPLES = examples(15, dev=5)
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


@pytest.fixture(scope="module")
def app(database_url: str):
    app = make_app(database_url)
    schedule = insert_schedule(database_url, "fuzz-schedule")
    jobs = [insert_job(database_url, status=status, schedule_id=schedule)
            for status in ("PENDING", "RUNNING", "SUCCEEDED", "DEAD", "CANCELLED")]
    app.config["FUZZ_IDS"] = {"schedule_id": schedule, "job_id": jobs[3]}
    yield app
    close_app(app)  # its credential cache listens until then


@pytest.fixture(scope="module")
def tokens(app) -> dict[str, str]:
    client = app.test_client()
    return {role: tokens_for(client, add_user(app, role))["access_token"]
            for role in ("VIEWER", "OPERATOR", "ADMIN")}


def _operations(app):
    loaded = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
    for result in loaded.include(path_regex="^(" + "|".join(MINE) + ")").get_all_operations():
        yield result.ok()


def _exercise(strategy, headers: dict[str, str]) -> None:
    @given(case=strategy)
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def exercise(case) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS)

    exercise()


# slow: the two modes are ~2 minutes of one CPU on the shared 2-core box (bench/RESULTS.md,
# issue 41), more than the whole edit loop's budget: `make test` runs them, `make test-fast`
# does not.
@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_5xx_and_every_response_matches_the_document(app, tokens, mode) -> None:
    failures: list[str] = []
    operations = list(_operations(app))
    assert len(operations) >= 15, [op.label for op in operations]
    for operation in operations:
        role = operation.definition.raw.get("x-required-role", "PUBLIC")
        headers = {} if role == "PUBLIC" else {"Authorization": f"Bearer {tokens[role]}"}

        # Random ids are almost always 404; a second pass pins them to rows that exist, so the
        # operations' success paths are exercised too.
        pinned = {name: value for name, value in app.config["FUZZ_IDS"].items()
                  if "{" + name + "}" in operation.path}
        strategies = [operation.as_strategy(generation_mode=mode)]
        if pinned and mode is GenerationMode.POSITIVE:
            strategies.append(operation.as_strategy(generation_mode=mode, path_parameters=pinned))
        for strategy in strategies:
            try:
                _exercise(strategy, headers)
            except Exception as exc:
                failures.append(f"{operation.label}: {exc}")
    assert not failures, "\n\n".join(failures)
