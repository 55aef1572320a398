"""The status sets of ``domain/states.py``, published in the OpenAPI document as named string
enums (``components.schemas``), so clients — the console's generated ``src/api/rules.ts`` —
read which statuses are finished, cancellable or retryable instead of copying the lists. The
names, grammars and defaults are published on the request schemas' own fields
(``pattern``, ``maxLength``, ``default``: api/schema_fields.py ``name_field``)."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from flask import Flask

from cronplane.domain.states import (
    CANCELLABLE_JOB_STATUSES,
    FAILED_JOB_STATUSES,
    FINISHED_ATTEMPT_STATUSES,
    FINISHED_JOB_STATUSES,
    RETRYABLE_JOB_STATUSES,
    UNSUCCESSFUL_JOB_STATUSES,
    AttemptStatus,
    JobStatus,
)

STATUS_SETS: dict[str, tuple[type[StrEnum], frozenset[Any], str]] = {
    "FinishedJobStatus": (JobStatus, FINISHED_JOB_STATUSES,
                          "A job in one of these never changes again"),
    "CancellableJobStatus": (JobStatus, CANCELLABLE_JOB_STATUSES,
                             "Waiting or in flight: POST /jobs/{id}/cancel applies"),
    "RetryableJobStatus": (JobStatus, RETRYABLE_JOB_STATUSES,
                           "POST /jobs/{id}/retry applies"),
    "FailedJobStatus": (JobStatus, FAILED_JOB_STATUSES,
                        "A run that counts as a failure of its schedule (health, alerts)"),
    "UnsuccessfulJobStatus": (JobStatus, UNSUCCESSFUL_JOB_STATUSES,
                              "Finished without succeeding"),
    "FinishedAttemptStatus": (AttemptStatus, FINISHED_ATTEMPT_STATUSES,
                              "An attempt in one of these is over"),
}


def _ordered(kind: type[StrEnum], members: Iterable[Any]) -> list[str]:
    """In the enum's own order: the document is the same on every run."""
    chosen = set(members)
    return [member.value for member in kind if member in chosen]


def init_app(_app: Flask, api: Any) -> None:
    for name, (kind, members, description) in STATUS_SETS.items():
        api.spec.components.schema(name, {"type": "string", "enum": _ordered(kind, members),
                                          "description": description})
