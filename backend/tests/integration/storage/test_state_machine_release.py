"""The job state machine, attempts that end by a release (the worker hands the job back): the statement of ``jobs.sql`` and
``domain/states.py`` agree on every case (see ``transitions.py`` for the table driven).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cronplane.domain.states import AttemptEnding
from cronplane.storage.database import Database
from cronplane.storage.job_store import JobStore
from tests.integration.storage.transitions import Case, assert_statement_and_domain_agree, case_id, cases

CASES = cases(AttemptEnding.RELEASE)


@pytest.fixture(scope="module")
def store(db: Database) -> Iterator[JobStore]:
    job_store = JobStore(db)
    yield job_store
    job_store.close()


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_statement_and_domain_agree_on_every_release_transition(store: JobStore, case: Case) -> None:
    assert_statement_and_domain_agree(store, case)
