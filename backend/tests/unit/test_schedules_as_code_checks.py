"""A schedules file's cron and zone are checked before anything is sent (review 2026-12-05, first
hour step 10): `apply --dry-run` accepted `0 0 25 * * *`, and the real run then failed half-way
with its earlier changes applied. The messages are the server's own (domain.cron)."""

from __future__ import annotations

import pytest

from cronplane.client import schedules_as_code as sac

GOOD = """
schedules:
  - name: first
    handler: noop
    cron: "0 0 3 * * *"
"""


def _file(cron: str, timezone: str = "UTC") -> str:
    return GOOD + f"""  - name: second
    handler: noop
    cron: "{cron}"
    timezone: {timezone}
"""


@pytest.mark.parametrize(("cron", "message"), [
    ("0 0 25 * * *", "schedules[1]: cron: field 3 (hour): 25 is out of range 0–23"),
    ("0 0 0 30 FEB *", "schedules[1]: cron: never fires"),
    ("0 0 12 ? * *", "schedules[1]: cron: field 4 (day of month): '?' is not supported"),
    ("* * *", "schedules[1]: cron: expected 6 fields"),
])
def test_a_bad_cron_refuses_the_whole_file_naming_the_schedule(cron: str, message: str) -> None:
    with pytest.raises(sac.FileError) as refused:
        sac.load(_file(cron), "f.yaml", None)
    assert str(refused.value).startswith(f"f.yaml: {message}"), str(refused.value)


def test_an_unknown_zone_refuses_the_file() -> None:
    with pytest.raises(sac.FileError, match=r"schedules\[1\]: timezone: unknown time zone "
                                            r"'Europe/Berln'"):
        sac.load(_file("0 0 3 * * *", "Europe/Berln"), "f.yaml", None)


def test_five_fields_and_a_zone_pass() -> None:
    desired = sac.load(_file("30 9 * * MON-FRI", "Europe/Berlin"), "f.yaml", None)
    assert [s["name"] for s in desired.schedules] == ["first", "second"]
