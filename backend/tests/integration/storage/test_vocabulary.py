"""One vocabulary: the migrated database's CHECKs and the published OpenAPI document list exactly
the values of the domain enums, match the name grammars of domain/names.py, and carry the status
sets and schedule defaults the console is generated from. ``alembic check`` compares columns and
indexes, not CHECK text, so without this a migration could drift from ``domain`` unnoticed."""

from __future__ import annotations

import json
import re

import pytest

from cronplane.domain import states
from cronplane.domain.chaos import ChaosKind
from cronplane.domain.firing import Misfire, Overlap
from cronplane.domain.keys import MAX_KEY_LENGTH
from cronplane.domain.names import CHANNEL_NAME, PROJECT_SLUG, QUEUE_NAME, NameGrammar
from cronplane.domain.notifications import DEFAULT_EVENTS
from cronplane.domain.roles import ROLE_NAMES
from cronplane.domain.schedule_definition import DEFAULTS, MAX_NAME, MAX_NOTIFY
from cronplane.domain.states import AttemptStatus, JobStatus, Trigger
from cronplane.storage.database import Database
from tests.conftest import REPO_ROOT

VOCABULARY: dict[str, list[str]] = {
    "job status": [s.value for s in JobStatus],
    "attempt status": [s.value for s in AttemptStatus],
    "trigger": [t.value for t in Trigger],
    "role": list(ROLE_NAMES),
    "overlap": [p.value for p in Overlap],
    "misfire": [p.value for p in Misfire],
    "chaos kind": [k.value for k in ChaosKind],
}
CHECKS = {
    "ck_jobs_status": "job status", "ck_attempts_status": "attempt status",
    "ck_jobs_trigger": "trigger", "ck_users_role": "role", "ck_api_tokens_role": "role",
    "ck_project_members_role": "role",
    "ck_schedules_overlap": "overlap", "ck_schedules_misfire": "misfire",
    "ck_chaos_experiments_kind": "chaos kind",
}
# The OpenAPI fields that carry each vocabulary (the console's types are generated from them).
OPENAPI = {
    ("Job", "status"): "job status", ("Attempt", "status"): "attempt status",
    ("Job", "trigger"): "trigger", ("User", "role"): "role", ("Token", "role"): "role",
    ("Schedule", "overlap"): "overlap", ("ScheduleCreate", "misfire"): "misfire",
    ("ChaosExperiment", "kind"): "chaos kind", ("ChaosCreate", "kind"): "chaos kind",
}


def _check(db: Database, constraint: str) -> str:
    """The CHECK's definition as the migrated database holds it."""
    with db.connection() as conn:
        row = conn.execute("SELECT pg_get_constraintdef(oid) AS d FROM pg_constraint "
                           "WHERE conname = %s", (constraint,)).fetchone()
    assert row is not None, f"{constraint} is missing"
    return str(row["d"])


@pytest.mark.parametrize("constraint", sorted(CHECKS))
def test_the_database_check_lists_the_domain_enum(db: Database, constraint: str) -> None:
    assert re.findall(r"'([^']*)'", _check(db, constraint)) == VOCABULARY[CHECKS[constraint]]


def test_the_openapi_document_lists_the_domain_enums() -> None:
    schemas = json.loads((REPO_ROOT / "frontend/openapi.json").read_text())["components"]["schemas"]
    for (schema, field), vocabulary in OPENAPI.items():
        assert schemas[schema]["properties"][field]["enum"] == VOCABULARY[vocabulary], (schema, field)


# -- names ----------------------------------------------------------------------------------------
GRAMMAR_CHECKS: dict[str, NameGrammar] = {
    "ck_queues_name": QUEUE_NAME, "ck_jobs_queue": QUEUE_NAME, "ck_schedules_queue": QUEUE_NAME,
    "ck_notification_channels_name": CHANNEL_NAME, "ck_projects_slug": PROJECT_SLUG,
}
# Every request field that takes a name, with the grammar it must publish.
GRAMMAR_FIELDS: dict[tuple[str, str], NameGrammar] = {
    ("JobCreate", "queue"): QUEUE_NAME, ("JobCreate", "project"): PROJECT_SLUG,
    ("ScheduleCreate", "queue"): QUEUE_NAME, ("ScheduleUpdate", "queue"): QUEUE_NAME,
    ("ScheduleCreate", "project"): PROJECT_SLUG, ("ChannelCreate", "name"): CHANNEL_NAME,
    ("ChannelCreate", "project"): PROJECT_SLUG, ("ProjectCreate", "slug"): PROJECT_SLUG,
    ("TokenCreate", "project"): PROJECT_SLUG,
}


def _schemas() -> dict[str, dict]:  # type: ignore[type-arg]
    return json.loads((REPO_ROOT / "frontend/openapi.json").read_text())["components"]["schemas"]


@pytest.mark.parametrize("constraint", sorted(GRAMMAR_CHECKS))
def test_the_database_holds_names_to_the_domain_grammar(db: Database, constraint: str) -> None:
    assert re.findall(r"~ '([^']*)'", _check(db, constraint)) == [GRAMMAR_CHECKS[constraint].pattern]


def test_the_database_holds_key_lengths_and_default_events_to_the_domain(db: Database) -> None:
    check = _check(db, "ck_jobs_concurrency_key")
    with db.connection() as conn:
        default = conn.execute(
            "SELECT column_default AS d FROM information_schema.columns "
            "WHERE table_name = 'notification_channels' AND column_name = 'events'").fetchone()
    assert re.findall(r"<= (\d+)", check) == [str(MAX_KEY_LENGTH)]
    assert default is not None
    assert json.loads(re.findall(r"'(.*)'::jsonb", default["d"])[0]) == list(DEFAULT_EVENTS)


def test_the_openapi_document_publishes_every_name_grammar() -> None:
    schemas = _schemas()
    for (schema, field), grammar in GRAMMAR_FIELDS.items():
        published = schemas[schema]["properties"][field]
        assert (published["pattern"], published["maxLength"]) == (
            grammar.pattern, grammar.max_length), (schema, field)
    notify = schemas["ScheduleCreate"]["properties"]["notify"]
    assert (notify["items"]["pattern"], notify["maxItems"]) == (CHANNEL_NAME.pattern, MAX_NOTIFY)
    assert schemas["JobCreate"]["properties"]["concurrency_key"]["maxLength"] == MAX_KEY_LENGTH


def test_the_openapi_document_publishes_the_schedule_defaults() -> None:
    fields = _schemas()["ScheduleCreate"]["properties"]
    assert {name: fields[name].get("default") for name in DEFAULTS} == dict(DEFAULTS)
    assert fields["name"]["maxLength"] == MAX_NAME


@pytest.mark.parametrize(("component", "members"), [
    ("FinishedJobStatus", states.FINISHED_JOB_STATUSES),
    ("CancellableJobStatus", states.CANCELLABLE_JOB_STATUSES),
    ("RetryableJobStatus", states.RETRYABLE_JOB_STATUSES),
    ("FailedJobStatus", states.FAILED_JOB_STATUSES),
    ("UnsuccessfulJobStatus", states.UNSUCCESSFUL_JOB_STATUSES),
    ("FinishedAttemptStatus", states.FINISHED_ATTEMPT_STATUSES)])
def test_the_openapi_document_publishes_the_status_sets(component: str,
                                                         members: frozenset[str]) -> None:
    assert set(_schemas()[component]["enum"]) == {str(m) for m in members}
