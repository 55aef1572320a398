"""A payload checked as submission checks it, without resolving any secret: one rule for the
API (management/jobs.py) and for ``cronplane.testing``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cronplane.domain import secrets
from cronplane.handlers.registry import HandlerSpec


def check_payload(spec: HandlerSpec, payload: dict[str, Any], settings: Any,
                  exists: Callable[[str], bool]) -> list[str]:
    """Schema and handler checks. A reference must name a secret ``exists`` knows (the caller's
    project's: another project's is unknown, exactly like a missing one) and stands for a string
    of unknown content. Messages name paths and expectations, never a value."""
    names, invalid = secrets.references(payload)
    problems = [f"invalid secret name {name!r} (expected [A-Z0-9_]{{1,64}})"
                for name in sorted(invalid)]
    problems += [f"unknown secret {name!r}" for name in sorted(names) if not exists(name)]
    if problems:
        return problems
    if not names:
        return spec.validate(payload, settings)
    opaque = frozenset(secrets.reference_paths(payload))
    placeheld = secrets.substitute(payload, lambda _name: secrets.PLACEHOLDER)
    return spec.validate(placeheld, settings, opaque)
