"""Issue 40: a new payload that carries a literal credential is refused at the door.

Version 3's contract names secrets by reference and never requires a literal credential in a
payload (none of its examples sends one), so every path that writes a payload — ad-hoc jobs,
batches, reruns with a changed payload, schedule create and update, and the trigger of a schedule
whose stored payload still holds one — answers 422 problem+json that names the field and the
kind of credential, points at ``{"$secret": …}``, never echoes the value, and changes nothing
(rows compared before and after). The rule is domain/credential_redaction.py (ADR 0035).
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest

from tests.support.db_state import assert_unchanged

TOKEN = "Bearer q9Z3-LEAKED-4f1b7c2e"
JWT_ISH = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiJ9."
           "c2lnbmF0dXJlLUxFQUtFRC1qd3Q")
VALUES = (TOKEN, "q9Z3-LEAKED-4f1b7c2e", JWT_ISH, "LEAKED-KEY-77")


def _http(headers: dict[str, Any], body: Any = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"method": "POST", "url": "https://api.example.org/v1/sync",
                               "headers": headers}
    if body is not None:
        payload["body"] = body
    return payload


BAD_PAYLOADS = [
    (_http({"Authorization": TOKEN}), "headers.Authorization", "credential-named field"),
    (_http({"X-Api-Key": "LEAKED-KEY-77"}), "headers.X-Api-Key", "credential-named field"),
    (_http({"Accept": "application/json"}, {"note": JWT_ISH}), "body.note", "JSON Web Token"),
]


def _assert_refused(response: Any, field: str, shape: str) -> None:
    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.content_type.startswith("application/problem+json")
    text = response.get_data(as_text=True)
    assert field in text and shape in text, f"the answer names the field and the kind: {text}"
    messages = [m for ms in json.loads(text)["errors"].values() for m in ms]
    assert any('{"$secret": "NAME"}' in m for m in messages), f"no pointer to a secret: {text}"
    assert not [v for v in VALUES if v in text], "the answer echoes the credential"


@pytest.mark.parametrize(("payload", "field", "shape"), BAD_PAYLOADS)
def test_an_ad_hoc_job_with_a_literal_credential_is_422_and_nothing_changes(
        clients, database_url, payload, field, shape) -> None:
    with assert_unchanged(database_url):
        _assert_refused(clients.admin.post("/api/v1/jobs", json={
            "handler": "http.request", "payload": payload}), field, shape)
        _assert_refused(clients.admin.post("/api/v1/batches", json={
            "jobs": [{"handler": "noop", "payload": {}},
                     {"handler": "http.request", "payload": payload}]}), field, shape)


@pytest.mark.parametrize(("payload", "field", "shape"), BAD_PAYLOADS)
def test_a_schedule_with_a_literal_credential_is_422_and_nothing_changes(
        clients, database_url, payload, field, shape) -> None:
    with assert_unchanged(database_url):
        _assert_refused(clients.admin.post("/api/v1/schedules", json={
            "name": "leaky", "cron": "0 0 3 * * *", "handler": "http.request",
            "payload": payload}), field, shape)


def test_an_update_or_a_rerun_that_adds_one_is_422_and_nothing_changes(
        clients, database_url) -> None:
    good = _http({"Authorization": {"$secret": "NOPE_UNUSED"}})
    del good["headers"]
    created = clients.admin.post("/api/v1/schedules", json={
        "name": "clean", "cron": "0 0 3 * * *", "handler": "http.request", "payload": good})
    assert created.status_code == 201, created.json
    job = clients.admin.post("/api/v1/jobs", json={"handler": "http.request", "payload": good})
    assert job.status_code in (201, 202), job.json
    for payload, field, shape in BAD_PAYLOADS:
        with assert_unchanged(database_url):
            _assert_refused(clients.admin.patch(
                f"/api/v1/schedules/{created.json['id']}", json={"payload": payload},
                headers={"If-Match": created.headers["ETag"]}), field, shape)
            _assert_refused(clients.admin.post(
                f"/api/v1/jobs/{job.json['id']}/rerun", json={"payload": payload}), field, shape)


def test_triggering_a_schedule_that_still_holds_one_is_422_and_nothing_changes(
        clients, database_url) -> None:
    # What an installation that ran migration 0039 before it knew shapes can still hold: a
    # credential-shaped value under an innocent key.
    with psycopg.connect(database_url, autocommit=True) as conn:
        sid = conn.execute(
            "INSERT INTO schedules (name, handler, payload, cron, project) VALUES "
            "('old-leaky', 'http.request', %s, '0 0 3 * * *', 'default') RETURNING id",
            (json.dumps(_http({"Accept": "*/*"}, {"note": JWT_ISH})),)).fetchone()[0]
    with assert_unchanged(database_url):
        _assert_refused(clients.operator.post(f"/api/v1/schedules/{sid}/trigger"),
                        "body.note", "JSON Web Token")


def test_a_reference_and_ordinary_values_are_accepted(clients) -> None:
    payload = _http({"Accept": "application/json", "X-Request-Id": "550e8400-e29b-41d4-a716"},
                    {"sha": "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
                     "next": "https://api.example.org/v1/items?page=2"})
    response = clients.admin.post("/api/v1/jobs", json={"handler": "http.request",
                                                        "payload": payload})
    assert response.status_code in (201, 202), response.get_data(as_text=True)
