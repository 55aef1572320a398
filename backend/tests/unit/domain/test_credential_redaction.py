"""The one rule for literal credentials (domain/credential_redaction.py): names and shapes, with
near misses beside each positive — a false positive refuses a good payload at submission."""

from __future__ import annotations

import base64
import json

import pytest

from cronplane.domain.credential_redaction import (
    MASK,
    Shape,
    findings,
    is_credential_name,
    redact,
    shape_of,
)


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


JWT = (_b64url({"alg": "HS256", "typ": "JWT"}) + "." + _b64url({"sub": "42", "exp": 1})
       + ".c2lnbmF0dXJlLWJ5dGVz")
BASIC = base64.b64encode(b"deploy:hunter2-s3cret").decode()
GHP = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx1\n"
       "-----END RSA PRIVATE KEY-----")

POSITIVES = [
    ("Bearer abc123def456", Shape.BEARER),
    ("bearer 9f8e7d6c5b4a", Shape.BEARER),
    ("Bearer aVeryLongOpaqueTokenWithoutDigitsAtAll", Shape.BEARER),
    (f"Bearer {JWT}", Shape.BEARER),
    (JWT, Shape.JWT),
    (f"Basic {BASIC}", Shape.BASIC),
    (GHP, Shape.GITHUB),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", Shape.GITHUB),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", Shape.SLACK),
    ("xoxp-1234-5678-abcdef", Shape.SLACK),
    ("sk-proj-Ab3De5Gh7Jk9Mn1Pq3St5Vw7", Shape.SECRET_KEY),
    ("sk_live_51HxAbCdEfGh12345678", Shape.SECRET_KEY),
    ("AKIAIOSFODNN7EXAMPLE", Shape.AWS),
    (PEM, Shape.PRIVATE_KEY),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", Shape.PRIVATE_KEY),
    ("postgres://app:s3cr3t@db.internal:5432/app", Shape.URL_PASSWORD),
    ("https://deploy:hunter2@git.example.com/repo.git", Shape.URL_PASSWORD),
]

NEAR_MISSES = [
    "Bearer of bad news",
    "the bearer instrument",
    "Bearer short1",
    "Basic plan",
    "Basic auth",
    "Basic " + base64.b64encode(b"no colon here").decode(),
    "eyJhbGciOiJIUzI1NiJ9",  # a JWT header alone
    "eyJub3QiOiJhIGhlYWRlciJ9.eyJzdWIiOiI0MiJ9.sig",  # base64url JSON without "alg"
    "ghp_short",
    "task-1234567890abcdefghij",
    "sk-learn-compatibility-layer-v2",
    "desk-booking-2026",
    "AKIAFAKE",
    "xoxo-hugs-and-kisses",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqh",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE",
    "550e8400-e29b-41d4-a716-446655440000",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
    "https://api.example.com:8443/v1/items?page=2&sort=name",
    "https://user@example.com/path",
    "mailto:ops@example.com",
    "job-42",
    "schedule:17:2026-12-06T03:00:00Z",
    "dGhpcyBpcyBqdXN0IGJhc2U2NA==",
    "***",
    "",
]


@pytest.mark.parametrize(("text", "shape"), POSITIVES)
def test_a_credential_shaped_value_is_found_under_an_innocent_key(text: str, shape: Shape) -> None:
    assert shape_of(text) == shape, f"{text!r} should read as a {shape}"
    redacted, found = findings({"q": text})
    assert [f.path for f in found] == ["q"]
    assert redacted["q"] != text and MASK in redacted["q"]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_a_near_miss_is_not_a_credential(text: str) -> None:
    assert shape_of(text) is None, f"{text!r} is not a credential"
    assert findings({"q": text, "items": [text]}) == ({"q": text, "items": [text]}, [])


def test_only_the_credential_part_of_a_longer_text_is_masked() -> None:
    text = f"curl -H 'Authorization: Bearer abc123def456' https://api.example.com/?page=2 # {GHP}"
    redacted, found = findings({"cmd": text})
    assert redacted == {"cmd": "curl -H 'Authorization: Bearer ***' "
                                "https://api.example.com/?page=2 # ***"}
    assert found[0].shape == Shape.BEARER
    url = findings({"dsn": "postgres://app:s3cr3t@db:5432/app"})[0]
    assert url == {"dsn": "postgres://app:***@db:5432/app"}


@pytest.mark.parametrize("name", ["Authorization", "proxy-authorization", "Cookie", "Set-Cookie",
                                  "X-Api-Key", "api_key", "X-Auth-Token", "X-Vault-Token",
                                  "client_secret", "password", "access_token", "refresh-token"])
def test_every_string_under_a_credential_named_key_is_masked_whole(name: str) -> None:
    assert is_credential_name(name)
    assert findings({"headers": {name: "plain"}}) == (
        {"headers": {name: MASK}}, findings({"headers": {name: "x"}})[1])
    assert redact({"headers": {name: "plain"}})[1] == [f"headers.{name}"]


@pytest.mark.parametrize("name", ["Accept", "Content-Type", "tokens_used", "secretary",
                                  "password_hint_shown", "keyboard", "X-Request-Id"])
def test_an_ordinary_name_is_not_credential_named(name: str) -> None:
    assert not is_credential_name(name)
    assert findings({name: "plain value"})[1] == []


def test_references_the_mask_and_non_strings_are_never_findings() -> None:
    payload = {"headers": {"Authorization": {"$secret": "PROD_TOKEN"}, "X-Api-Key": MASK,
                           "X-Auth-Token": ""},
               "token": 12345, "password": None, "nested": [{"secret": True}]}
    assert findings(payload) == (payload, [])


def test_redacting_twice_changes_nothing_more() -> None:
    payload = {"headers": {"Authorization": "Bearer abc123def456", "Accept": "*/*"},
               "body": {"steps": [{"note": f"use {JWT}"}, {"dsn": "mysql://u:p4ss@db/x"}]}}
    once, found = findings(payload)
    assert [f.path for f in found] == ["headers.Authorization", "body.steps.0.note",
                                       "body.steps.1.dsn"]
    assert findings(once) == (once, [])
    assert payload["headers"]["Authorization"] == "Bearer abc123def456", "the input is not mutated"


def test_redact_keeps_migration_0039s_form() -> None:
    value, paths = redact({"payload": {"headers": {"X-Api-Key": "k"}}}, "definition")
    assert value == {"payload": {"headers": {"X-Api-Key": MASK}}}
    assert paths == ["definition.payload.headers.X-Api-Key"]
