import pytest

from cronplane.domain.job_search import JobSearch, candidate_query, parse


@pytest.mark.parametrize(("text", "expected"), [
    ("2004", JobSearch(2004, "'2004' | '-2004'")),
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


FREQUENCIES = {"host": 0.08, "refused": 0.08, "refusal": 0.001, "schedule": 0.7, "50": 0.0075,
               "1": 0.1, "10": 0.016, "2": 0.04, "3": 0.03, "o'brien": 0.2}


@pytest.mark.parametrize(("query", "expected"), [
    # The broad prefix goes; the common whole lexeme stays (cheap), the rare prefix narrows.
    ("'host' <-> '-41':* & 'refused':*", "'host' & '-41':*"),
    ("'refused':* & 'host' <-> '-41':*", "'host' & '-41':*"),
    # A prefix's breadth is every common lexeme it begins: "refus" covers refused and refusal.
    ("'refus':* & 'zeta':*", "'zeta':*"),
    ("'refusa':* & 'zeta':*", "'refusa':* & 'zeta':*"),
    # Nothing narrow: every term stays, their AND is what keeps the candidates few.
    ("'1':* & '2':* & '3':*", "'1':* & '2':* & '3':*"),
    ("'refused':*", "'refused':*"),
    ("'host' & 'refused':*", "'host' & 'refused':*"),
    # A common lexeme as a whole word is no prefix: it stays.
    ("'refused' & 'zeta':*", "'refused' & 'zeta':*"),
    ("'schedule' <-> '50':* & 'refused':*", "'schedule' & '50':*"),
    # Quoting survives, and is read when the breadth is judged.
    ("'o''brien':* & 'x\\\\y':*", "'x\\\\y':*"),
    # A lexeme twice (host-4 host-41) is asked once.
    ("'host' <-> '-4':* & 'host' <-> '-41':*", "'host' & '-4':* & '-41':*"),
    ("'zeta':*", "'zeta':*"),
])
def test_candidates_leave_out_broad_prefixes_while_a_narrow_term_remains(query: str,
                                                                         expected: str) -> None:
    assert candidate_query(query, FREQUENCIES) == expected


def test_without_statistics_every_term_is_a_candidate() -> None:
    assert candidate_query("'host' <-> '-41':* & 'refused':*", {}) == "'host' & '-41':* & 'refused':*"
