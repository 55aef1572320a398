"""One vocabulary: the migrated database's CHECKs and the published OpenAPI document list exactly
the values of the domain enums. ``alembic check`` compares columns and indexes, not CHECK text, so
without this a migration could drift from ``domain`` unnoticed."""

from __future__ import annotations

import json
import re

import pytest

from cronplane.domain.chaos import ChaosKind
from cronplane.domain.firing import Misfire, Overlap
from cronplane.domain.roles import ROLE_NAMES
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


@pytest.mark.parametrize("constraint", sorted(CHECKS))
def test_the_database_check_lists_the_domain_enum(db: Database, constraint: str) -> None:
    with db.connection() as conn:
        row = conn.execute("SELECT pg_get_constraintdef(oid) AS d FROM pg_constraint "
                           "WHERE conname = %s", (constraint,)).fetchone()
    assert row is not None, f"{constraint} is missing"
    assert re.findall(r"'([^']*)'", row["d"]) == VOCABULARY[CHECKS[constraint]]


def test_the_openapi_document_lists_the_domain_enums() -> None:
    schemas = json.loads((REPO_ROOT / "frontend/openapi.json").read_text())["components"]["schemas"]
    for (schema, field), vocabulary in OPENAPI.items():
        assert schemas[schema]["properties"][field]["enum"] == VOCABULARY[vocabulary], (schema, field)
