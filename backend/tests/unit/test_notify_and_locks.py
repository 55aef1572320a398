"""The NOTIFY payload formats and the advisory lock keys are defined once, in storage."""

from __future__ import annotations

import json

from cronplane.storage import notify
from cronplane.storage.locks import AdvisoryLock
from tests.conftest import REPO_ROOT


def test_a_cancel_notice_round_trips_and_a_wake_up_names_no_job() -> None:
    assert notify.cancelled_job(notify.cancel_payload(42)) == 42
    assert notify.cancelled_job("") is None and not notify.is_cancel("")
    assert notify.is_cancel("cancel:x") and notify.cancelled_job("cancel:x") is None


def test_chaos_notices_are_json() -> None:
    assert json.loads(notify.chaos_started(7)) == {"started": 7}
    assert json.loads(notify.chaos_stopped(8)) == {"stopped": 8}


def test_every_advisory_lock_has_its_own_key_and_the_audit_key_is_the_trigger_s() -> None:
    keys = [lock.value for lock in AdvisoryLock]
    assert len(keys) == len(set(keys)) == len(AdvisoryLock.__members__)
    trigger = (REPO_ROOT / "migrations/versions/0001_initial_schema.py").read_text()
    assert f"pg_advisory_xact_lock({AdvisoryLock.AUDIT_CHAIN.value})" in trigger
