"""Secret references in payloads: ``{"$secret": "NAME"}`` stands for a value kept outside the
database, resolved only when the attempt runs. Pure: finding, substituting and masking; where the
values come from is ``handlers/secret_source.py``.

The payload in the database holds the reference, never the value; anything the run writes back
(result, error, output) goes through ``mask`` so a value that came back in an answer is ``***``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

REFERENCE_KEY = "$secret"
NAME_PATTERN = re.compile(r"[A-Z0-9_]{1,64}")
MASK = "***"


def _is_reference(value: object) -> bool:
    return isinstance(value, dict) and len(value) == 1 and REFERENCE_KEY in value


def references(payload: Any) -> tuple[set[str], set[str]]:
    """(valid names, invalid names) of every reference anywhere in ``payload``."""
    valid: set[str] = set()
    invalid: set[str] = set()

    def walk(value: Any) -> None:
        if _is_reference(value):
            name = value[REFERENCE_KEY]
            if isinstance(name, str) and NAME_PATTERN.fullmatch(name):
                valid.add(name)
            else:
                invalid.add(str(name)[:80])
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(payload)
    return valid, invalid


def substitute(payload: Any, lookup: Callable[[str], str]) -> Any:
    """``payload`` with every reference replaced by ``lookup(name)`` (a new object)."""
    if _is_reference(payload):
        return lookup(str(payload[REFERENCE_KEY]))
    if isinstance(payload, dict):
        return {key: substitute(value, lookup) for key, value in payload.items()}
    if isinstance(payload, list):
        return [substitute(value, lookup) for value in payload]
    return payload


def mask(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` with every occurrence of every secret replaced by ``***``, in strings at any
    depth (dict keys included). Longest first, so a secret that contains another is hidden whole."""
    ordered = sorted({s for s in secrets if s}, key=len, reverse=True)
    if not ordered:
        return value
    return _mask(value, ordered)


def _mask(value: Any, ordered: list[str]) -> Any:
    if isinstance(value, str):
        for secret in ordered:
            if secret in value:
                value = value.replace(secret, MASK)
        return value
    if isinstance(value, Mapping):
        return {_mask(k, ordered) if isinstance(k, str) else k: _mask(v, ordered)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mask(v, ordered) for v in value]
    return value
