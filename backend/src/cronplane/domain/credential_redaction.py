"""Literal credentials in stored JSON: which values are one, and their redaction. One rule for
every place that asks: migration 0039 (schedule history and the audit trail), the background
pass over finished jobs' payloads (execution/payload_redactor.py) and the submission check that
refuses a new one (handlers/payload_check.py). ADR 0035, docs/security-model.md.

A value is a literal credential when

* it is a non-empty string under a **credential-named key** (``Authorization``, ``X-Api-Key``,
  ``X-Auth-Token``, ``client_secret`` …, any depth): the whole string is one; or
* some part of a string, under any key, has a **credential's shape**: an HTTP ``Bearer`` or
  ``Basic`` credential, a JWT (its first part base64url JSON naming ``alg``), a token with a
  well-known issuer prefix (GitHub ``ghp_`` …/``github_pat_``, Slack ``xox[abpr]-``, ``sk-``
  keys, AWS ``AKIA``/``ASIA`` key ids), a PEM private key, or the password of a URL's userinfo.
  Only that part is one (``"curl -H 'Authorization: Bearer abc…'"`` keeps its ``curl``).

Version 3 names secrets by reference (``{"$secret": NAME}``, an object, never a string), so a
reference is never a finding, and neither is the mask ``***``: redacting twice changes nothing.
The shapes are strict on purpose — a false positive would refuse a good payload at submission —
so ids, hashes, UUIDs and plain URLs never match (tests/unit/domain/test_credential_redaction.py
holds positives and near misses side by side). Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

MASK = "***"
REFERENCE_KEY = "$secret"  # the same key as domain/secrets.py; a reference is never a literal

# Header and field names that carry a credential: Authorization and its proxy twin, cookies, API
# keys, and anything ending in token, secret, password or api key (X-Auth-Token, X-Vault-Token,
# client_secret, X-Api-Key …), in any letter case and with '-' or '_'.
CREDENTIAL_NAME = re.compile(
    r"^(?:proxy[-_]?)?authorization$|^(?:set[-_]?)?cookie$|^(?:x[-_])?api[-_]?key$"
    r"|(?:^|[-_])(?:token|secret|password|passwd|api[-_]?key)$|^(?:access|refresh|bearer)[-_]?token$",
    re.IGNORECASE)

# A cheap first filter for SQL (``column::text ~ SQL_PREFILTER``, Postgres ARE): every JSON text
# holding a finding matches it, most others do not; ``redact`` decides exactly. Names as above;
# shapes by their fixed parts (``eyJ`` is base64url of ``{"``, a JWT header's start).
SQL_PREFILTER = (
    r"(?i)(authori[sz]ation|cookie|api[-_]?key|token|secret|passw|bearer|basic |eyJ|gh[pousr]_"
    r"|github_pat_|xox[abpr]-|sk-|sk_live_|sk_test_|AKIA|ASIA|PRIVATE KEY|://[^/\"@]*:[^/\"@]*@)")


class Shape(StrEnum):
    """What a credential-shaped value looked like: named in messages instead of the value."""

    NAMED = "credential-named field"
    BEARER = "Bearer credential"
    BASIC = "Basic credential"
    JWT = "JSON Web Token"
    GITHUB = "GitHub token"
    SLACK = "Slack token"
    SECRET_KEY = "secret key (sk-)"  # noqa: S105 - a label, not a password
    AWS = "AWS access key id"
    PRIVATE_KEY = "private key"
    URL_PASSWORD = "password in a URL"  # noqa: S105 - a label, not a password


@dataclass(frozen=True)
class Finding:
    path: str  # dotted, list items by index: "headers.Authorization", "steps.0.url"
    shape: Shape


# Characters of an RFC 7235 token68 (a Bearer credential's alphabet).
_TOKEN68 = r"[A-Za-z0-9\-._~+/]"
# A credential, not prose: at least 8 characters with a digit ("Bearer of bad news" is not one),
# or 20 and more of any of them.
_BEARER = re.compile(
    rf"(?<![A-Za-z0-9])Bearer[ \t]+(?=(?:{_TOKEN68}*[0-9]){{1}})({_TOKEN68}{{8,}}=*)"
    rf"|(?<![A-Za-z0-9])Bearer[ \t]+({_TOKEN68}{{20,}}=*)",
    re.IGNORECASE)
_BASIC = re.compile(r"(?<![A-Za-z0-9])Basic[ \t]+([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])",
                    re.IGNORECASE)
_JWT = re.compile(r"(?<![A-Za-z0-9_-])(eyJ[A-Za-z0-9_-]{4,})\.([A-Za-z0-9_-]{2,})\.([A-Za-z0-9_-]*)")
_GITHUB = re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,})"
                     r"(?![A-Za-z0-9_])")
_SLACK = re.compile(r"(?<![A-Za-z0-9_-])xox[abpr]-[0-9]+-[A-Za-z0-9-]{6,}")
# OpenAI-style "sk-…" and Stripe "sk_live_…": long, and (like every random key) with upper and
# lower case letters and a digit — "sk-learn-compat-layer" is a slug, not a key.
_SK = re.compile(r"(?<![A-Za-z0-9_-])sk(?:-|_live_|_test_)(?=[A-Za-z0-9_-]*[0-9])"
                 r"(?=[A-Za-z0-9_-]*[a-z])(?=[A-Za-z0-9_-]*[A-Z])[A-Za-z0-9_-]{20,}")
_AWS = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])")
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|.*)", re.DOTALL)
# scheme://user:password@host — the password part only (the rest of the URL stays readable).
_URL_PASSWORD = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:([^\s/?#@]+)@")


def _b64decode(text: str, *, urlsafe: bool) -> bytes | None:
    padded = text + "=" * (-len(text) % 4)
    try:
        return (base64.urlsafe_b64decode(padded) if urlsafe
                else base64.b64decode(padded, validate=True))
    except (binascii.Error, ValueError):
        return None


def _basic_credentials(encoded: str) -> bool:
    """``user:password`` in printable text: "Basic plan" or "Basic auth" decode to noise."""
    raw = _b64decode(encoded, urlsafe=False)
    if raw is None:
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return ":" in text and text.isprintable() and not text.startswith(":")


def _jwt_header(encoded: str) -> bool:
    raw = _b64decode(encoded, urlsafe=True)
    if raw is None:
        return False
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return False
    return isinstance(header, dict) and isinstance(header.get("alg"), str)


# (shape, pattern, which group is the credential (0: the whole match), a check of that group)
_SHAPES: tuple[tuple[Shape, re.Pattern[str], int, Callable[[str], bool] | None], ...] = (
    (Shape.PRIVATE_KEY, _PRIVATE_KEY, 0, None),
    (Shape.JWT, _JWT, 0, lambda whole: _jwt_header(whole.split(".", 1)[0])),
    (Shape.BASIC, _BASIC, 1, _basic_credentials),
    (Shape.GITHUB, _GITHUB, 0, None),
    (Shape.SLACK, _SLACK, 0, None),
    (Shape.SECRET_KEY, _SK, 0, None),
    (Shape.AWS, _AWS, 0, None),
    (Shape.URL_PASSWORD, _URL_PASSWORD, 1, None),
)


def _spans(text: str) -> list[tuple[int, int, Shape]]:
    """Where ``text`` holds credential-shaped parts: (start, end, shape), sorted, disjoint."""
    found: list[tuple[int, int, Shape]] = []
    for match in _BEARER.finditer(text):
        group = 1 if match.group(1) is not None else 2
        found.append((match.start(group), match.end(group), Shape.BEARER))
    for shape, pattern, group, check in _SHAPES:
        for match in pattern.finditer(text):
            part = match.group(group)
            if part != MASK and (check is None or check(part)):
                found.append((match.start(group), match.end(group), shape))
    found.sort()
    disjoint: list[tuple[int, int, Shape]] = []
    for start, end, shape in found:
        if disjoint and start < disjoint[-1][1]:  # inside one already found (a JWT after Bearer)
            last = disjoint[-1]
            disjoint[-1] = (last[0], max(last[1], end), last[2])
            continue
        disjoint.append((start, end, shape))
    return disjoint


def shape_of(text: str) -> Shape | None:
    """The first credential shape in ``text``, or None."""
    spans = _spans(text)
    return spans[0][2] if spans else None


def is_credential_name(name: str) -> bool:
    return bool(CREDENTIAL_NAME.search(name))


def _is_reference(value: object) -> bool:
    return isinstance(value, dict) and len(value) == 1 and REFERENCE_KEY in value


def _redact_string(key: str | None, text: str) -> tuple[str, Shape | None]:
    if not text or text == MASK:
        return text, None
    if key is not None and is_credential_name(key):
        return MASK, Shape.NAMED
    spans = _spans(text)
    if not spans:
        return text, None
    parts: list[str] = []
    at = 0
    for start, end, _shape in spans:
        parts.append(text[at:start])
        parts.append(MASK)
        at = end
    parts.append(text[at:])
    return "".join(parts), spans[0][2]


def _walk(value: Any, key: str | None, path: str, found: list[Finding]) -> Any:
    if isinstance(value, str):
        redacted, shape = _redact_string(key, value)
        if shape is not None:
            found.append(Finding(path, shape))
        return redacted
    if _is_reference(value):
        return value
    if isinstance(value, dict):
        return {k: _walk(item, str(k), f"{path}.{k}" if path else str(k), found)
                for k, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, None, f"{path}.{index}" if path else str(index), found)
                for index, item in enumerate(value)]
    return value


def findings(value: Any) -> tuple[Any, list[Finding]]:
    """``value`` with every literal credential replaced by ``***`` (the whole string under a
    credential-named key, the credential-shaped part elsewhere), and what was found where.
    Anything else is returned unchanged; a value with no finding is returned equal."""
    found: list[Finding] = []
    return _walk(value, None, "", found), found


def redact(value: Any, path: str = "") -> tuple[Any, list[str]]:
    """``findings`` as (value, dotted paths) — the form migration 0039 records."""
    redacted, found = findings(value)
    prefix = f"{path}." if path else ""
    return redacted, [prefix + f.path for f in found]
