from datetime import UTC, datetime, timedelta, timezone

import pytest

from cronplane.domain.keys import is_reserved_key, request_fingerprint, schedule_fire_key


def test_schedule_fire_key_is_utc_to_the_second_with_z() -> None:
    paris = timezone(timedelta(hours=2))
    fire = datetime(2026, 10, 25, 2, 30, 0, 123456, tzinfo=paris)
    assert schedule_fire_key(42, fire) == "schedule:42:2026-10-25T00:30:00Z"
    assert schedule_fire_key(42, datetime(2026, 10, 25, 0, 30, tzinfo=UTC)) == \
        "schedule:42:2026-10-25T00:30:00Z"


def test_naive_fire_time_is_rejected() -> None:
    with pytest.raises(ValueError):
        schedule_fire_key(1, datetime(2026, 1, 1))


def test_fingerprint_ignores_key_order_and_whitespace() -> None:
    assert request_fingerprint({"a": 1, "b": [1, 2]}) == request_fingerprint({"b": [1, 2], "a": 1})
    assert request_fingerprint({"a": 1}) != request_fingerprint({"a": 2})
    assert len(request_fingerprint({})) == 64


def test_reserved_prefix() -> None:
    assert is_reserved_key("schedule:1:x")
    assert not is_reserved_key("my-key")
