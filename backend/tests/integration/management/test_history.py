"""Job history: keyset pages over the indexes, filters, search, and never a sequential scan."""

from __future__ import annotations

from functools import partial

import psycopg
import pytest

from cronplane.config import Settings
from cronplane.management import history
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput, NotFound
from cronplane.storage import job_list
from cronplane.storage.search.jobs import resolved_query
from tests.integration.api.job_seed import insert_job, insert_schedule


@pytest.fixture(scope="module")
def seeded(database_url: str, db) -> dict:
    ctx = ManagementContext(settings=Settings(secret_key="k" * 40), db=db)
    schedule = insert_schedule(database_url, "nightly-report")
    ids = {
        "ok": [insert_job(database_url, status="SUCCEEDED") for _ in range(5)],
        "dead": [insert_job(database_url, status="DEAD", handler="fail",
                            error="connection refused by upstream", attempts=["FAILED"] * 3)],
        "pending": [insert_job(database_url, status="PENDING", handler="sleep")],
        "scheduled": [insert_job(database_url, status="SUCCEEDED", schedule_id=schedule,
                                 idempotency_key=f"schedule:{schedule}:2026-01-01T00:00:0{i}Z")
                      for i in range(3)],
    }
    return {"ctx": ctx, "ids": ids, "schedule": schedule}


def test_pages_walk_all_jobs_newest_first_without_repeats(seeded) -> None:
    ctx = seeded["ctx"]
    seen: list[int] = []
    cursor = None
    while True:
        page = history.list_jobs(ctx, Actor.system(), limit=3, cursor=cursor)
        seen.extend(job.id for job in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted(seen, reverse=True), "pages must be newest first"
    assert len(seen) == len(set(seen)) == 10, "each job exactly once across pages"


def test_filters_by_status_schedule_handler_and_search(seeded) -> None:
    ctx, ids = seeded["ctx"], seeded["ids"]
    dead = history.list_jobs(ctx, Actor.system(), statuses=["DEAD"])
    assert [j.id for j in dead.items] == ids["dead"]
    both = history.list_jobs(ctx, Actor.system(), statuses=["DEAD", "PENDING"])
    assert sorted(j.id for j in both.items) == sorted(ids["dead"] + ids["pending"])
    by_schedule = history.list_jobs(ctx, Actor.system(), schedule_id=seeded["schedule"])
    assert sorted(j.id for j in by_schedule.items) == sorted(ids["scheduled"])
    assert [j.id for j in history.list_jobs(ctx, Actor.system(), handler="sleep").items] == ids["pending"]
    found = history.list_jobs(ctx, Actor.system(), q="refused")
    assert [j.id for j in found.items] == ids["dead"], "q searches error text"
    assert len(history.list_jobs(ctx, Actor.system(), q="schedule").items) == 3, "q searches idempotency keys"


def test_search_words_the_parser_splits_stay_prefixes_of_what_they_find(database_url, seeded) -> None:
    # "host-417" is the phrase host, -417 to the text parser: the inner part is whole (cheap on a
    # lexeme most rows carry), the end of the word still a prefix (migration 0021).
    ctx = seeded["ctx"]
    ids = {error: insert_job(database_url, status="DEAD", handler="fail", error=error)
           for error in ("refused by host-417", "refused by host-4170", "refused by hostname-417",
                         "refused by foo-bar", "refused by upstream host-12")}
    try:
        def found(q: str) -> set[int]:
            return {j.id for j in history.list_jobs(ctx, Actor.system(), q=q).items}

        assert found("host-417") == {ids["refused by host-417"], ids["refused by host-4170"]}
        assert found("foo-ba") == {ids["refused by foo-bar"]}, "a hyphenated word is a prefix"
        assert found("upstream host-1") == {ids["refused by upstream host-12"]}
        assert found("hostname-41 refused") == {ids["refused by hostname-417"]}
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("DELETE FROM jobs WHERE id = ANY(%s)", (list(ids.values()),))


@pytest.mark.parametrize("walk", [2, 3, 100])
def test_a_search_with_a_filter_finds_jobs_its_walk_did_not_reach(database_url, seeded, monkeypatch,
                                                                  walk: int) -> None:
    # A search with another filter tests the text on the filter's first WALK rows and asks the
    # search index only for the jobs below them (storage/job_list.py): every match is found, once,
    # newest first, whether the walk fills the page, stops short of the matches, or sees all rows.
    monkeypatch.setattr(job_list, "WALK", walk)
    monkeypatch.setattr(job_list, "_STATEMENTS", {})
    ctx = seeded["ctx"]
    errors = ["needle in the old one", "needle again", None, None, "hay", None, "a needle, newest"]
    ids = [insert_job(database_url, status="DEAD" if e else "SUCCEEDED", handler="walk-probe",
                      error=e) for e in errors]
    needles = [ids[6], ids[1], ids[0]]
    try:
        def pages(limit: int, **filters) -> list[int]:
            seen: list[int] = []
            cursor = None
            while True:
                page = history.list_jobs(ctx, Actor.system(), limit=limit, cursor=cursor,
                                         handler="walk-probe", q="needle", **filters)
                seen.extend(j.id for j in page.items)
                if (cursor := page.next_cursor) is None:
                    return seen

        assert pages(50) == needles
        assert pages(1) == needles, "page by page, below the walk too"
        assert pages(2) == needles
        assert pages(50, statuses=["DEAD", "SUCCEEDED"]) == needles
        assert pages(50, statuses=["SUCCEEDED"]) == []
        assert [j.id for j in history.list_jobs(ctx, Actor.system(), handler="walk-probe",
                                                q="hay").items] == [ids[4]]
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("DELETE FROM jobs WHERE id = ANY(%s)", (ids,))


# (FIRST_WALK, TEXT_WALK, WALK_ON) of storage/job_list.py: one stretch of 2, 3 or 100 jobs (the
# last sees every job); two, the second taken (WALK_ON 0 or 1: the first found enough) or not
# (99: the index answers below the first stretch); a second stretch that sees every job.
SEARCH_ALONE_WALKS = [(2, 2, 0), (3, 3, 0), (100, 100, 0), (1, 3, 0), (1, 3, 1), (1, 3, 99),
                      (2, 4, 99), (2, 100, 1), (100, 200, 0)]


def _walk_alone(monkeypatch, first: int, walk: int, walk_on: int) -> None:
    monkeypatch.setattr(job_list, "FIRST_WALK", first)
    monkeypatch.setattr(job_list, "TEXT_WALK", walk)
    monkeypatch.setattr(job_list, "WALK_ON", walk_on)
    monkeypatch.setattr(job_list, "_STATEMENTS", {})


@pytest.mark.parametrize(("first", "walk", "walk_on"), SEARCH_ALONE_WALKS)
def test_a_search_alone_finds_jobs_its_walk_did_not_reach(database_url, seeded, monkeypatch,
                                                          first: int, walk: int,
                                                          walk_on: int) -> None:
    # A search alone tests the text on the newest FIRST_WALK jobs, on the next ones up to
    # TEXT_WALK when the first held WALK_ON matches, then takes every match below the last job
    # walked from the search index (storage/job_list.py): found once each, newest first, when a
    # walk fills the page, stops short of the matches, or sees every job; a word no job has
    # finds nothing (the case that walked all of history).
    _walk_alone(monkeypatch, first, walk, walk_on)
    ctx = seeded["ctx"]
    errors = ["qzwalk in the old one", "qzwalk again", None, None, "hay", None, "a qzwalk, newest"]
    ids = [insert_job(database_url, status="DEAD" if e else "SUCCEEDED", handler="walk-alone",
                      error=e) for e in errors]
    ids.append(insert_job(database_url, status="PENDING", handler="walk-alone", error="qzwalk"))
    needles = [ids[7], ids[6], ids[1], ids[0]]
    try:
        def pages(limit: int, q: str = "qzwalk") -> list[int]:
            seen: list[int] = []
            cursor = None
            while True:
                page = history.list_jobs(ctx, Actor.system(), limit=limit, cursor=cursor, q=q)
                seen.extend(j.id for j in page.items)
                if (cursor := page.next_cursor) is None:
                    return seen

        assert pages(50) == needles
        assert pages(1) == needles, "page by page, below the walk too"
        assert pages(3) == needles
        assert pages(50, q="qzwalkabsent") == []
        assert pages(50, q=f"#{ids[4]}") == [ids[4]], "an id still finds its job"
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("DELETE FROM jobs WHERE id = ANY(%s)", (ids,))


@pytest.mark.parametrize(("first", "walk", "walk_on"),
                         [(1, 1, 0), (2, 2, 0), (100, 100, 0), (1, 3, 0), (1, 3, 99)])
def test_a_split_word_below_the_walk_finds_its_phrase_not_its_parts(database_url, seeded,
                                                                    monkeypatch, first: int,
                                                                    walk: int,
                                                                    walk_on: int) -> None:
    # Below the walk, a search alone takes candidates from the index with the lexemes of a split
    # word in any order ("qzsplit" and "-7" apart), then tests each with the phrase itself
    # (storage.search.jobs.candidate_clauses): the jobs with the parts apart are not found.
    _walk_alone(monkeypatch, first, walk, walk_on)
    ctx = seeded["ctx"]
    errors = ["refused by qzsplit-7", "qzsplit then exit -7", "qzsplit-70 timed out",
              "exit -7 on qzsplit", "refused by qzsplit-7 again", None]
    ids = [insert_job(database_url, status="DEAD" if e else "SUCCEEDED", handler="split-probe",
                      error=e) for e in errors]
    ids.append(insert_job(database_url, status="PENDING", handler="split-probe",
                          error="qzsplit then -7, pending"))
    needles = [ids[4], ids[2], ids[0]]
    try:
        def pages(limit: int) -> list[int]:
            seen: list[int] = []
            cursor = None
            while True:
                page = history.list_jobs(ctx, Actor.system(), limit=limit, cursor=cursor,
                                         q="qzsplit-7")
                seen.extend(j.id for j in page.items)
                if (cursor := page.next_cursor) is None:
                    return seen

        assert pages(50) == needles
        assert pages(1) == needles, "page by page"
        assert pages(2) == needles
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("DELETE FROM jobs WHERE id = ANY(%s)", (ids,))


def test_multi_status_pages_are_disjoint_and_ordered(seeded) -> None:
    ctx = seeded["ctx"]
    first = history.list_jobs(ctx, Actor.system(), statuses=["SUCCEEDED", "DEAD"], limit=4)
    second = history.list_jobs(ctx, Actor.system(), statuses=["SUCCEEDED", "DEAD"], limit=4,
                               cursor=first.next_cursor)
    ids = [j.id for j in first.items] + [j.id for j in second.items]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 8


def test_an_unfiltered_page_writes_its_size_and_a_filtered_one_binds_it(seeded) -> None:
    """An unfiltered page (any projects, any cursor) carries its size in its text, so on a big
    table the server keeps one generic plan instead of planning every execution (issue 16,
    bench/RESULTS.md); a filtered page binds its size, planned for its values. Pages of every size
    and from every cursor still hold the newest jobs."""
    db = seeded["ctx"].db
    everything = [job.id for job in history.list_jobs(seeded["ctx"], Actor.system(), limit=200).items]
    for size in (1, 4, 200):
        for flt in (job_list.JobListFilter(limit=size),
                    job_list.JobListFilter(limit=size, projects=["default"], before=everything[0])):
            text, _ = _page_statement(db, flt)
            assert text.rstrip().endswith(f"LIMIT {size + 1}") and "%(limit)s" not in text
            newest = everything if flt.before is None else everything[1:]
            assert [row.id for row in job_list.list_page(db, flt)] == newest[:size + 1]
    for flt in (job_list.JobListFilter(limit=3, queue="default"),
                job_list.JobListFilter(limit=3, statuses=["SUCCEEDED"]),
                job_list.JobListFilter(limit=3, q="refused")):
        assert "%(limit)s" in _page_statement(db, flt)[0]


def _page_statement(db, flt: job_list.JobListFilter) -> tuple[str, dict]:
    with db.autocommit() as conn:
        statement = job_list.page_statement(flt, partial(resolved_query, conn))
    assert statement is not None
    return statement


def test_a_status_list_reads_the_status_index_behind_a_backlog(pg, fresh_database_url) -> None:
    """The newest jobs are a PENDING backlog and the status asked for is most of the rest. Walking
    the primary key backwards filters the whole backlog before the first row (84 ms behind
    457,602 PENDING jobs, bench/RESULTS.md); the status list reads ix_jobs_status_id whatever the
    planner estimates (storage/job_list.py, STATUS_ORDER), alone and as a branch of several
    statuses, and still pages newest first."""
    from cronplane.storage.database import Database

    with psycopg.connect(fresh_database_url, autocommit=True) as conn:
        conn.execute("INSERT INTO jobs (handler, payload, status, attempt_count, max_attempts, "
                     "trigger, started_at, finished_at) "
                     "SELECT 'noop', '{}', CASE WHEN i % 10 = 0 THEN 'DEAD' ELSE 'SUCCEEDED' END, "
                     "1, 3, 'api', now(), now() FROM generate_series(1, 3000) AS i")
        conn.execute("INSERT INTO jobs (handler, payload, status, max_attempts, trigger) "
                     "SELECT 'noop', '{}', 'PENDING', 3, 'api' FROM generate_series(1, 2000)")
        newest = [row[0] for row in conn.execute(
            "SELECT id FROM jobs WHERE status = 'SUCCEEDED' ORDER BY id DESC LIMIT 70")]
    with psycopg.connect(pg.owner_url(fresh_database_url), autocommit=True) as conn:
        conn.execute("ANALYZE jobs")  # the owner's: the runtime role's ANALYZE is skipped
    db = Database(fresh_database_url, application_name="cronplane-test")
    try:
        for flt in (job_list.JobListFilter(limit=50, statuses=["SUCCEEDED"]),
                    job_list.JobListFilter(limit=50, projects=["default"],
                                           statuses=["SUCCEEDED", "CANCELLED"]),
                    job_list.JobListFilter(limit=50, statuses=["SUCCEEDED"], before=newest[9])):
            text, params = _page_statement(db, flt)
            with psycopg.connect(fresh_database_url) as conn:
                # The status index's random heap reads made dear, so the primary key wins any plan
                # that may choose it (the estimate that cost 84 ms behind a real backlog), and
                # sorting every match made as dear as it is on a big history (here it is tiny).
                conn.execute("SET random_page_cost = 1000")
                conn.execute("SET enable_sort = off")
                plan = "\n".join(row[0] for row in conn.execute("EXPLAIN " + text, params))
            assert "ix_jobs_status_id" in plan and "Backward using pk_jobs" not in plan, plan
            expected = newest[10:61] if flt.before else newest[:51]
            assert [row.id for row in job_list.list_page(db, flt)] == expected
    finally:
        db.close()


def test_job_detail_has_attempts_in_order(seeded) -> None:
    detail = history.get_job(seeded["ctx"], Actor.system(), seeded["ids"]["dead"][0])
    assert [a.number for a in detail.attempts] == [1, 2, 3]
    with pytest.raises(NotFound):
        history.get_job(seeded["ctx"], Actor.system(), 10**6)
    with pytest.raises(NotFound):
        history.get_job(seeded["ctx"], Actor.system(), 2**70)


@pytest.mark.parametrize("kwargs", [{"limit": 0}, {"limit": 201}, {"cursor": "garbage!"},
                                    {"statuses": ["NOPE"]}, {"q": "x" * 201}])
def test_bad_arguments_are_invalid_input(seeded, kwargs) -> None:
    with pytest.raises(InvalidInput):
        history.list_jobs(seeded["ctx"], Actor.system(), **kwargs)


def _plan(url: str, sql: str, *params) -> str:
    with psycopg.connect(url) as conn:
        conn.execute("SET enable_seqscan = off")  # a tiny table would be seq-scanned anyway
        return "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, params).fetchall())


@pytest.mark.parametrize("where", ["status = 'DEAD'", "schedule_id = 1", "handler = 'noop'",
                                   "queue = 'default'",
                                   "finished_at IS NOT NULL AND jobs_search_vector(handler, "
                                   "idempotency_key, error) @@ plainto_tsquery('simple', "
                                   "'refused')"])
def test_history_filters_have_an_index(database_url: str, seeded, where: str) -> None:
    plan = _plan(database_url, f"SELECT id FROM jobs WHERE {where} ORDER BY id DESC LIMIT 51")
    assert "Seq Scan" not in plan, plan


def test_a_broad_word_beside_a_rare_one_is_tested_not_asked_of_the_index(pg, fresh_database_url,
                                                                          monkeypatch) -> None:
    # With the index's statistics saying "qzcommon" is in most finished jobs, a search alone
    # asks the index for the rare word's candidates only and tests each with both words
    # (domain.job_search.candidate_query): still every match, newest first, and no other job.
    from cronplane.storage.database import Database
    from cronplane.storage.search import jobs as job_search

    url = fresh_database_url
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO jobs (handler, status, finished_at, error) "
                     "SELECT 'noop', 'DEAD', now(), 'qzcommon failure ' || g "
                     "FROM generate_series(1, 3000) AS g")
    with psycopg.connect(pg.owner_url(url), autocommit=True) as conn:
        conn.execute("ANALYZE jobs")  # as autovacuum would; the runtime role may not
    db = Database(url, application_name="cronplane-test")
    ctx = ManagementContext(settings=Settings(secret_key="k" * 40), db=db)
    errors = ["qzrare-7 alone", "qzcommon qzrare-7", "qzrare-70 qzcommonly", "qzcommon qzrare-8",
              "qzrare qzcommon -7"]
    ids = [insert_job(url, status="DEAD", handler="narrow", error=e) for e in errors]
    _walk_alone(monkeypatch, 1, 1, 0)  # straight to the index
    monkeypatch.setattr(job_search, "_FREQUENCIES", [])  # this database's statistics
    try:
        with db.autocommit() as conn:
            frequencies = job_search.lexeme_frequencies(conn)
            assert frequencies.get("qzcommon", 0) > 0.5, frequencies
            flt = job_list.JobListFilter(limit=50, q="qzcommon qzrare-7")
            _text, params = job_list.page_statement(flt, partial(resolved_query, conn),
                                                    frequencies)
        assert params["search_candidates"] == "'qzrare' & '-7':*"

        def pages(limit: int) -> list[int]:
            seen: list[int] = []
            cursor = None
            while True:
                page = history.list_jobs(ctx, Actor.system(), limit=limit, cursor=cursor,
                                         q="qzcommon qzrare-7")
                seen.extend(j.id for j in page.items)
                if (cursor := page.next_cursor) is None:
                    return seen

        assert pages(50) == [ids[2], ids[1]]
        assert pages(1) == [ids[2], ids[1]], "page by page"
    finally:
        db.close()
