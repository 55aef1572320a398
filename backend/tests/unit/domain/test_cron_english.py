"""describe(): plain-English sentences for expressions."""

from __future__ import annotations

import pytest

from cronplane.domain.cron import CronExpression, describe
from tests.unit.domain.test_cron_fixture import CASES


@pytest.mark.parametrize(
    ("expression", "english"),
    [
        ("0 30 9 * * MON-FRI", "At 09:30:00, Monday through Friday"),
        ("*/5 * * * * *", "Every 5 seconds"),
        ("* * * * * *", "Every second"),
        ("0 * * * * *", "Every minute"),
        ("0 */15 * * * *", "Every 15 minutes"),
        ("0 0 * * * *", "Every hour"),
        ("0 0 */2 * * *", "Every 2 hours"),
        ("0 30 * * * *", "At minute 30 past the hour"),
        ("0 0 9-17 * * *", "Every hour, between 09:00 and 17:59"),
        ("0 */5 9 * * *", "Every 5 minutes, between 09:00 and 09:59"),
        ("0 0 9,17 * * *", "At 09:00:00 and 17:00:00"),
        ("0 0 0 L * *", "At 00:00:00, on the last day of the month"),
        (
            "0 0 0 1 1,4,7,10 *",
            "At 00:00:00, on day 1 of the month, only in January, April, July and October",
        ),
        ("0 0 12 * * 0", "At 12:00:00, only on Sunday"),
        ("0 0 12 * * 7", "At 12:00:00, only on Sunday"),
        ("0 0 0 13 * FRI", "At 00:00:00, on day 13 of the month or on Friday"),
        ("0 0 0 L * MON", "At 00:00:00, on the last day of the month or on Monday"),
        ("0 0 9-17/2 * * *", "Every 2 hours, between 09:00 and 17:59"),
        ("0 30 */3 * * *", "At minute 30 past the hour, every 3 hours"),
        ("0 5/10 * * * *", "Every 10 minutes, starting at minute 5 past the hour"),
        ("0 0 0 * * 1-5,0", "At 00:00:00, Monday through Friday and Sunday"),
        ("0 0 0 * * MON/2", "At 00:00:00, every 2 days of the week, starting on Monday"),
        ("0 0 0 1-10/2 * *", "At 00:00:00, every 2 days, on days 1 through 10 of the month"),
        ("0 0 1-3,5 * * *", "Every hour, between 01:00 and 03:59 and between 05:00 and 05:59"),
        (
            "15 30 9-17 * * MON-FRI",
            "At second 15 past the minute, at minute 30 past the hour, between 09:00 and 17:59, "
            "Monday through Friday",
        ),
        ("0 0 0 1 */3 *", "At 00:00:00, on day 1 of the month, every 3 months"),
    ],
)
def test_description_reads_as_plain_english(expression: str, english: str) -> None:
    assert describe(CronExpression.parse(expression)) == english


def test_every_fixture_expression_gets_a_capitalised_sentence() -> None:
    for case in CASES:
        if case["valid"]:
            sentence = describe(CronExpression.parse(case["expression"]))
            assert sentence[0].isupper() and "  " not in sentence, sentence
