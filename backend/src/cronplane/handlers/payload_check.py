"""A payload checked as submission checks it, without resolving any secret: one rule for the
API (management/jobs.py) and for ``cronplane.testing``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cronplane.domain import credential_redaction, secrets
from cronplane.handlers.registry import HandlerSpec


def check_payload(spec: HandlerSpec, payload: dict[str, Any], settings: Any,
                  exists: Callable[[str], bool]) -> list[str]:
    """Schema and handler checks. A reference must name a secret ``exists`` knows (the caller's
    project's: another project's is unknown, exactly like a missing one) and stands for a string
    of unknown content. Messages name paths and expectations, never a value.

    A literal credential (a string under a credential-named key such as ``Authorization``, or a
    credential-shaped value anywhere: domain/credential_redaction.py) is refused before anything
    else: it would be stored in the job or schedule and shown to everyone who reads it. The
    message names the field and the shape and points at a secret reference (ADR 0035)."""
    problems = literal_credentials(payload)
    if problems:
        return problems
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


def literal_credentials(payload: Any) -> list[str]:
    """One message per literal credential in ``payload``: its path and shape, never its value."""
    return [f"{finding.path}: a literal credential ({finding.shape}) is not accepted in a "
            'payload; put the value in a secret and write {"$secret": "NAME"} in its place '
            "(docs/secrets.md)"
            for finding in credential_redaction.findings(payload)[1]]
