import pytest

from cronplane.domain.job_search import JobSearch, parse


@pytest.mark.parametrize(("text", "expected"), [
    ("2004", JobSearch(2004, "'2004'")),
    ("#2004", JobSearch(2004, None)),
    (" #7 ", JobSearch(7, None)),
    ("pay", JobSearch(None, "'pay':*", ("pay",))),
    ("payments refused",
     JobSearch(None, "'payments':* & 'refused':*", ("payments", "refused"))),
    ("payments.sync", JobSearch(None, "'payments.sync':*", ("payments.sync",))),
    # tsquery syntax is data, never syntax
    ("a & !b | (c)", JobSearch(None, "'a':* & 'b':* & 'c':*", ("a", "b", "c"))),
    ("o'brien", JobSearch(None, "'o':* & 'brien':*", ("o", "brien"))),
    ("#", JobSearch(None, None)),
    ("   ", JobSearch(None, None)),
    ("0", JobSearch(None, "'0':*", ("0",))),  # no job 0: a word only
    ("99999999999999999999", JobSearch(None, "'99999999999999999999':*",
                                         ("99999999999999999999",))),  # beyond bigint
])
def test_parse(text: str, expected: JobSearch) -> None:
    assert parse(text) == expected
