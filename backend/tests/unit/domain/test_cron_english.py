"""describe(): the API's English is cron-descriptor's sentence, with our day rule's connector.

Pinned sentences catch a library upgrade that changes wording (the console's fixture would then
disagree); the day-rule cases are the one place we steer the library.
"""

from __future__ import annotations

import pytest

from cronplane.domain.cron import CronExpression, describe
from tests.unit.domain.test_cron_fixture import CASES


@pytest.mark.parametrize(
    ("expression", "english"),
    [
        ("0 30 9 * * MON-FRI", "At 09:30, Monday through Friday"),
        ("*/5 * * * * *", "Every 5 seconds"),
        ("* * * * * *", "Every second"),
        ("0 * * * * *", "Every minute"),
        ("0 */15 * * * *", "Every 15 minutes"),
        ("0 0 * * * *", "Every hour"),
        ("0 0 */2 * * *", "Every 2 hours"),
        ("0 30 * * * *", "At 30 minutes past the hour"),
        ("0 */5 9 * * *", "Every 5 minutes, between 09:00 and 09:59"),
        ("0 0 9,17 * * *", "At 09:00 and 17:00"),
        ("0 0 0 L * *", "At 00:00, on the last day of the month"),
        ("0 0 0 1 1,4,7,10 *",
         "At 00:00, on day 1 of the month, only in January, April, July, and October"),
        ("0 0 12 * * 0", "At 12:00, only on Sunday"),
        ("0 0 12 * * 7", "At 12:00, only on Sunday"),
        ("0 30 */3 * * *", "At 30 minutes past the hour, every 3 hours"),
        ("0 5/10 * * * *", "Every 10 minutes, starting at 5 minutes past the hour"),
        ("0 0 0 1 */3 *", "At 00:00, on day 1 of the month, every 3 months"),
    ],
)
def test_description_reads_as_plain_english(expression: str, english: str) -> None:
    assert describe(CronExpression.parse(expression)) == english


@pytest.mark.parametrize(
    ("expression", "english"),
    [
        # Both day fields restricted: either matches.
        ("0 0 0 13 * FRI", "At 00:00, on day 13 of the month, or on Friday"),
        ("0 0 0 L * MON", "At 00:00, on the last day of the month, or on Monday"),
        # A day of month starting with * is unrestricted for the OR rule: both must match.
        ("0 0 0 */2 * SUN", "At 00:00, every 2 days, only on Sunday"),
        ("0 0 0 */5 * 0-6", "At 00:00, every 5 days, Sunday through Saturday"),
    ],
)
def test_the_day_fields_are_joined_by_our_day_rule(expression: str, english: str) -> None:
    assert describe(CronExpression.parse(expression)) == english


def test_every_fixture_expression_gets_a_capitalised_sentence() -> None:
    for case in CASES:
        if case["valid"]:
            sentence = describe(CronExpression.parse(case["expression"]))
            assert sentence[0].isupper() and "  " not in sentence, sentence
