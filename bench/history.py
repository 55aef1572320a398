"""History at scale (issue 16): filtered lists on a large history, a purge that must not stall
claims, and the memory of ``cronplane serve``.

    python -m bench history [--rows 10000000] [--requests 200] [--backlog 200000]
                            [--purge-rows 1000000] [--rss-drain 1000000] [--only lists|purge|rss]
                            [--drop-template]

1. ``--rows`` finished jobs (``bench/history_data.py``: 4 projects, 5 queues, 50 schedules,
   SUCCEEDED / DEAD / CANCELLED, payload and error text, 30 days), loaded set-based once into a
   template database ``bench_history_tpl_<rows>`` (kept for the next run, migrated to head on
   reuse; ``--drop-template`` removes it at the end) and cloned per run.
2. lists: ``GET /jobs`` filtered by status, schedule, queue, handler and text (common and rare
   terms, alone and combined), first page and a deep cursor, as an OPERATOR of ``default`` (70 %
   of the rows): the HTTP p50/p99 of one keep-alive client, ``--requests`` each (target p99
   ≤ 50 ms), and the statement the API sent, captured in process and run under
   ``EXPLAIN (ANALYZE, BUFFERS)``: database time, the indexes used, buffers read.
3. purge: ``--backlog`` noop jobs drained by one ``cronplane worker`` (default settings): once
   to warm the clone's cache (printed, not compared), alone, while ``maintenance.purge_history``
   (queued first, same worker) deletes the ``--purge-rows`` oldest finished jobs, and alone
   again. The drain's rate is counted inside the window where
   the purge ran (target: within 25 % of the drain alone); the purge's own rate is printed.
4. rss: the memory of a ``cronplane serve`` process tree (gunicorn master and workers, execution
   threads on, its defaults) at idle and after it drained ``--rss-drain`` noop jobs: the sum of
   RSS (shared pages counted once per process) and of PSS (target ≤ 300 MB).

Uses ``--database-url`` / ``DATABASE_URL`` or the embedded Postgres in ``.cronplane/bench-pg``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import psycopg
import requests
from bench import history_data
from bench.api import CRONPLANE, Serve, free_port, latency, login, percentile
from bench.databases import BenchServer
from psycopg import sql

REPO = Path(__file__).resolve().parents[1]


def scalar(url: str, statement: str, *args: Any) -> Any:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(statement, args).fetchone()  # type: ignore[arg-type]
    return row[0] if row else None


# -- the database --------------------------------------------------------------------------------
def template(server: BenchServer, rows: int) -> str:
    """The loaded template database for ``rows`` (made on first use, migrated on reuse)."""
    from cronplane.storage import migrator

    name = f"bench_history_tpl_{rows}"
    owner_url = server._owner_url_for(name)
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists:
            complete = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s "
                                    "AND datistemplate", (name,)).fetchone()
            if not complete:  # an interrupted load
                conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
                exists = None
        if not exists:
            statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
            if server.owner:
                statement = sql.SQL("{} OWNER {}").format(statement, sql.Identifier(server.owner))
            conn.execute(statement)
    if not exists:
        migrator.upgrade(owner_url, runtime_role=server.runtime_role)
        print(f"bulk-loading {rows:,} jobs into {name}", file=sys.stderr, flush=True)
        loaded = history_data.load(owner_url, rows)
        print(f"  {loaded}", file=sys.stderr, flush=True)
        with psycopg.connect(server.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER DATABASE {} IS_TEMPLATE true")
                         .format(sql.Identifier(name)))
    else:
        migrator.upgrade(owner_url, runtime_role=server.runtime_role)
        with psycopg.connect(owner_url, autocommit=True) as conn:
            conn.execute("ANALYZE jobs")
    return name


def clone(server: BenchServer, source: str) -> tuple[str, str]:
    """A copy of ``source`` for one run (a purge changes it): its name and runtime URL."""
    import secrets

    name = f"{server.prefix}_{secrets.token_hex(4)}"
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        statement = sql.SQL("CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY").format(
            sql.Identifier(name), sql.Identifier(source))
        if server.owner:
            statement = sql.SQL("{} OWNER {}").format(statement, sql.Identifier(server.owner))
        conn.execute(statement)  # statistics and visibility maps are copied with the files
    return name, server._url_for(name)


# -- lists ---------------------------------------------------------------------------------------
# (label, query string, list_jobs keyword arguments): the same filter through HTTP and in process.
def list_cases(url: str) -> list[tuple[str, str, dict[str, Any]]]:
    deep = scalar(url, "SELECT max(id) / 2 FROM jobs")
    from cronplane.management.pagination import encode_cursor

    cursor = encode_cursor({"id": int(deep)})
    return [
        ("first page", "", {}),
        ("status=DEAD", "?status=DEAD", {"statuses": ["DEAD"]}),
        ("status=CANCELLED", "?status=CANCELLED", {"statuses": ["CANCELLED"]}),
        ("status=CANCELLED&status=DEAD", "?status=CANCELLED&status=DEAD",
         {"statuses": ["CANCELLED", "DEAD"]}),
        ("schedule_id=7", "?schedule_id=7", {"schedule_id": 7}),
        ("schedule_id=7&status=CANCELLED", "?schedule_id=7&status=CANCELLED",
         {"schedule_id": 7, "statuses": ["CANCELLED"]}),
        ("queue=emails", "?queue=emails", {"queue": "emails"}),
        ("queue=exports (2 %)", "?queue=exports", {"queue": "exports"}),
        ("queue=exports&status=DEAD", "?queue=exports&status=DEAD",
         {"queue": "exports", "statuses": ["DEAD"]}),
        ("handler=report", "?handler=report", {"handler": "report"}),
        ("q=refused (common)", "?q=refused", {"q": "refused"}),
        ("q=host-417 (rare)", "?q=host-417", {"q": "host-417"}),
        ("q=refused&queue=exports", "?q=refused&queue=exports", {"q": "refused", "queue": "exports"}),
        ("q=refused&status=DEAD", "?q=refused&status=DEAD", {"q": "refused", "statuses": ["DEAD"]}),
        # host-4 prefixes 111 of the 1,000 hosts (~0.9 % of the jobs), host-41 eleven (~0.09 %)
        ("q=host-4 (~0.9 %)", "?q=host-4", {"q": "host-4"}),
        ("q=host-41 (~0.09 %)", "?q=host-41", {"q": "host-41"}),
        ("q=zzz (no job has it)", "?q=zzz", {"q": "zzz"}),
        # Several words: a rare one beside a common prefix (every host-41 job is refused), a
        # rare one no job has with it, and a numeric prefix of ~150,000 scheduler keys beside
        # the common word (domain.job_search.candidate_query).
        ("q=host-41 refused", "?q=host-41%20refused", {"q": "host-41 refused"}),
        ("q=connection host-417", "?q=connection%20host-417", {"q": "connection host-417"}),
        ("q=host-41 timeout (no job)", "?q=host-41%20timeout", {"q": "host-41 timeout"}),
        ("q=schedule:50 refused", "?q=schedule:50%20refused", {"q": "schedule:50 refused"}),
        ("first page, cursor half-way back", f"?cursor={cursor}", {"cursor": cursor}),
        ("status=DEAD, cursor half-way back", f"?status=DEAD&cursor={cursor}",
         {"statuses": ["DEAD"], "cursor": cursor}),
    ]


def explain_list(url: str, filters: dict[str, Any]) -> dict[str, Any]:
    """The statement ``list_jobs`` sends for ``filters`` (as an OPERATOR of ``default``), run
    under EXPLAIN ANALYZE: database time, indexes, buffers."""
    from cronplane.config import Settings
    from cronplane.domain.roles import Role
    from cronplane.management import history
    from cronplane.management.actor import Actor
    from cronplane.management.context import ManagementContext
    from cronplane.storage import job_list
    from cronplane.storage.queries import QUERIES
    from cronplane.storage.search.budget import SEARCH_WORK_MEM
    from cronplane.storage.search.jobs import lexeme_frequencies, resolved_query

    ctx = ManagementContext.build(Settings(secret_key="unused"), url)  # noqa: S106
    seen: list[job_list.JobListFilter] = []

    def capture(db: Any, flt: job_list.JobListFilter) -> list[Any]:
        seen.append(flt)
        return []

    # list_jobs validates and scopes the filters, list_page sends them: capture what it was given
    # and explain the very text and parameters it would have run.
    history.list_page, original = capture, history.list_page  # type: ignore[assignment]
    try:
        actor = Actor(username="bench-operator", role=Role.OPERATOR, user_id=1,
                      memberships={"default": Role.OPERATOR})
        history.list_jobs(ctx, actor, limit=50, **filters)
    finally:
        history.list_page = original  # type: ignore[assignment]
        ctx.db.close()
    with psycopg.connect(url, autocommit=True) as conn:
        flt = seen[-1]
        if flt.q:  # what storage.search.budget sets for the search's transaction
            conn.execute(QUERIES["search_limits"].replace(", true)", ", false)"),
                         {"timeout": "0", "work_mem": SEARCH_WORK_MEM})
        statement, parameters = job_list.page_statement(
            flt, partial(resolved_query, conn),
            lexeme_frequencies(conn) if flt.q else None) or ("", {})
        for _ in range(2):  # warm, then measure (the HTTP figures are warm too)
            plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + statement,
                                parameters).fetchone()[0][0]  # type: ignore[index]
    indexes: list[str] = []
    for node in _nodes(plan["Plan"]):
        name = node.get("Index Name")
        if name and name not in indexes:
            indexes.append(name)
        if node["Node Type"] == "Seq Scan":
            indexes.append(f"SEQ SCAN {node.get('Relation Name')}")
    top = plan["Plan"]
    return {"db_ms": round(plan["Execution Time"], 2), "indexes": indexes,
            "buffers_hit": top.get("Shared Hit Blocks", 0),
            "buffers_read": top.get("Shared Read Blocks", 0)}


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", ()):
        yield from _nodes(child)


def lists(url: str, requests_each: int) -> dict[str, Any]:
    serve = Serve(url, free_port())
    out: dict[str, Any] = {}
    try:
        token = login(url, serve.base, "OPERATOR")
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {token}"
        api = serve.base + "/api/v1/jobs"
        # The same server and client on a request that reads nothing: what the host and the
        # request path cost before any SQL (on a loaded box most of every figure below).
        out["ceiling: GET /healthz"] = latency(session, serve.base + "/healthz", requests_each)
        print(f"  ceiling: {out['ceiling: GET /healthz']}", file=sys.stderr, flush=True)
        for label, query, filters in list_cases(url):
            figures: dict[str, Any] = latency(session, api + query, requests_each)
            figures.update(explain_list(url, filters))
            out[label] = figures
            print(f"  {label}: {figures}", file=sys.stderr, flush=True)
    finally:
        serve.stop()
    return out


# -- purge ---------------------------------------------------------------------------------------
def queue_backlog(url: str, count: int) -> tuple[int, int]:
    """``count`` noop jobs; their id range."""
    with psycopg.connect(url, autocommit=True) as conn:
        first, last = conn.execute(
            "WITH i AS (INSERT INTO jobs (handler, payload, requested_by) "
            "SELECT 'noop', '{}'::jsonb, 'bench-backlog' FROM generate_series(1, %s) "
            "RETURNING id) SELECT min(id), max(id) FROM i", (count,)).fetchone()  # type: ignore[misc]
    return int(first), int(last)


def purge_cutoff_days(url: str, rows: int) -> int:
    """``older_than_days`` that selects about ``rows`` of the loaded history (whole days)."""
    oldest = scalar(url, "SELECT extract(epoch FROM now() - min(finished_at)) / 86400 FROM jobs "
                         "WHERE finished_at IS NOT NULL")
    at = scalar(url, "SELECT extract(epoch FROM now() - finished_at) / 86400 FROM jobs "
                     "WHERE finished_at IS NOT NULL ORDER BY finished_at OFFSET %s LIMIT 1",
                rows)
    return max(1, int(at or oldest))


def drain(url: str, owner_url: str, count: int, *, purge_days: int | None) -> dict[str, Any]:
    """Queue ``count`` noops (and a purge first, when asked), run one worker until the noops
    (and the purge) are done; rates from the database clock. The noops are then deleted and
    the table vacuumed as its owner (the runtime role may not: its VACUUM was skipped with a
    warning until 2026-12-03, so each drain met the dead rows of every drain before it)."""
    purge_id = None
    if purge_days is not None:
        purge_id = scalar(url, "INSERT INTO jobs (handler, payload, priority, requested_by) "
                               "VALUES ('maintenance.purge_history', %s, 100, 'bench') "
                               "RETURNING id", json.dumps({"older_than_days": purge_days}))
    lo, hi = queue_backlog(url, count)
    finished_before = scalar(url, "SELECT count(*) FROM jobs WHERE finished_at IS NOT NULL")
    env = {**os.environ, "DATABASE_URL": url, "CRONPLANE_LOG_LEVEL": "WARNING"}
    proc = subprocess.Popen([str(CRONPLANE), "worker"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 3600
        # Cheap enough not to compete with the drain: the primary-key range stops at the first
        # job not done yet (a count over the backlog cost seconds per poll on this history).
        while time.monotonic() < deadline and scalar(
                url, "SELECT EXISTS (SELECT 1 FROM jobs WHERE id = %s AND finished_at IS NULL) "
                     "OR EXISTS (SELECT 1 FROM jobs WHERE id BETWEEN %s AND %s "
                     "AND status <> 'SUCCEEDED')", purge_id or 0, lo, hi):
            time.sleep(1)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    with psycopg.connect(url, autocommit=True) as conn:
        first, last = conn.execute(
            "SELECT min(started_at), max(finished_at) FROM jobs WHERE id BETWEEN %s AND %s",
            (lo, hi)).fetchone()  # type: ignore[misc]
        out: dict[str, Any] = {"jobs": count, "seconds": round((last - first).total_seconds(), 2),
                               "jobs_per_s": round(count / (last - first).total_seconds(), 1)}
        if purge_id is not None:
            status, result, p_start, p_end = conn.execute(
                "SELECT status, result, started_at, finished_at FROM jobs WHERE id = %s",
                (purge_id,)).fetchone()  # type: ignore[misc]
            deleted = (result or {}).get("deleted", 0)
            window_start, window_end = max(first, p_start), min(last, p_end)
            in_window = conn.execute(
                "SELECT count(*) FROM jobs WHERE id BETWEEN %s AND %s "
                "AND finished_at BETWEEN %s AND %s", (lo, hi, window_start, window_end)
            ).fetchone()[0]  # type: ignore[index]
            overlap = (window_end - window_start).total_seconds()
            purge_seconds = (p_end - p_start).total_seconds()
            out["purge"] = {"status": status, "older_than_days": purge_days,
                            "deleted": deleted, "seconds": round(purge_seconds, 2),
                            "jobs_deleted_per_s": round(deleted / purge_seconds, 1)}
            out["overlap_seconds"] = round(overlap, 2)
            out["jobs_per_s_while_purging"] = round(in_window / overlap, 1) if overlap > 0 else None
        del finished_before
        conn.execute("DELETE FROM jobs WHERE id BETWEEN %s AND %s", (lo, hi))
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute("VACUUM jobs")
        conn.execute("VACUUM attempts")
    return out


def purge(url: str, owner_url: str, backlog: int, purge_rows: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    days = purge_cutoff_days(url, purge_rows)
    # A fresh clone's first drain reads its indexes from disk and sets hint bits: 1.7-3.3x slower
    # than the next in every run of 2026-12-02, and 3,869 against 15,288 jobs/s in one run of
    # 2026-12-03. That drain measured the cache, not the purge's neighbour; it is run first and
    # only printed.
    out["drain_warm_up"] = drain(url, owner_url, backlog, purge_days=None)
    print(f"  drain to warm up (not compared): {out['drain_warm_up']}", file=sys.stderr,
          flush=True)
    out["drain_alone"] = drain(url, owner_url, backlog, purge_days=None)
    print(f"  drain alone: {out['drain_alone']}", file=sys.stderr, flush=True)
    out["drain_with_purge"] = drain(url, owner_url, backlog, purge_days=days)
    print(f"  drain with purge: {out['drain_with_purge']}", file=sys.stderr, flush=True)
    during = out["drain_with_purge"].get("jobs_per_s_while_purging")
    if during:
        out["while_purging / alone (target >= 0.75)"] = round(
            during / out["drain_alone"]["jobs_per_s"], 2)
    out["drain_alone_again"] = drain(url, owner_url, backlog, purge_days=None)
    print(f"  drain alone again: {out['drain_alone_again']}", file=sys.stderr, flush=True)
    if during:
        # The drains on either side of the purge, each compared: what the purge costs is only
        # shown when both say the same.
        out["while_purging / alone after (target >= 0.75)"] = round(
            during / out["drain_alone_again"]["jobs_per_s"], 2)
    return out


# -- memory --------------------------------------------------------------------------------------
def memory_mb(pid: int) -> dict[str, Any]:
    """RSS and PSS of a process and its descendants (PSS splits each shared page among the
    processes that map it, so its sum is what the tree really holds)."""
    import psutil

    root = psutil.Process(pid)
    rss = pss = 0
    processes = 0
    for process in [root, *root.children(recursive=True)]:
        try:
            info = process.memory_full_info()
        except psutil.NoSuchProcess:
            continue
        processes += 1
        rss += info.rss
        pss += getattr(info, "pss", info.rss)
    return {"rss_sum_mb": round(rss / 2**20, 1), "pss_sum_mb": round(pss / 2**20, 1),
            "processes": processes}


def rss(server: BenchServer, count: int) -> dict[str, Any]:
    with server.fresh() as url:
        port = free_port()
        env = {**os.environ, "DATABASE_URL": url, "CRONPLANE_PORT": str(port),
               "CRONPLANE_HOST": "127.0.0.1", "CRONPLANE_SECRET_KEY": "bench-" + "k" * 40,
               "CRONPLANE_LOG_LEVEL": "WARNING"}
        proc = subprocess.Popen([str(CRONPLANE), "serve"], env=env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if requests.get(base + "/readyz", timeout=1).status_code == 200:
                        break
                except requests.RequestException:
                    time.sleep(0.3)
            time.sleep(5)
            idle = memory_mb(proc.pid)
            print(f"  idle: {idle}", file=sys.stderr, flush=True)
            started = time.monotonic()
            done = 0
            peak = idle
            while done < count:
                batch = min(100_000, count - done)
                queue_backlog(url, batch)
                while scalar(url, "SELECT count(*) FROM jobs WHERE status <> 'SUCCEEDED'"):
                    time.sleep(1)
                    now = memory_mb(proc.pid)
                    if now["rss_sum_mb"] > peak["rss_sum_mb"]:
                        peak = now
                done += batch
                scalar(url, "WITH d AS (DELETE FROM jobs RETURNING 1) SELECT count(*) FROM d")
                print(f"  drained {done:,}: {memory_mb(proc.pid)}", file=sys.stderr, flush=True)
            seconds = time.monotonic() - started
            time.sleep(5)
            after = memory_mb(proc.pid)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(60)
    return {"idle": idle, "after_drain": after, "peak_while_draining": peak, "drained": count,
            "drain_jobs_per_s": round(count / seconds, 1), "target_mb": 300}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench history", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--backlog", type=int, default=200_000)
    parser.add_argument("--purge-rows", type=int, default=1_000_000)
    parser.add_argument("--rss-drain", type=int, default=1_000_000)
    parser.add_argument("--only", action="append", choices=("lists", "purge", "rss"))
    parser.add_argument("--drop-template", action="store_true",
                        help="drop the loaded template database at the end")
    args = parser.parse_args(argv)
    only = set(args.only or ("lists", "purge", "rss"))
    server = BenchServer(args.database_url, prefix="bench_history")
    out: dict[str, Any] = {"load_average_at_start": [round(x, 1) for x in os.getloadavg()],
                           "started": datetime.now().astimezone().isoformat(timespec="seconds"),
                           "note": "a shared 2-core box: compare figures of one run"}
    source = None
    try:
        if only & {"lists", "purge"}:
            source = template(server, args.rows)
            name, url = clone(server, source)
            try:
                out["history"] = {"template": source,
                                  "jobs": scalar(url, "SELECT count(*) FROM jobs"),
                                  "database_size": scalar(
                                      url, "SELECT pg_size_pretty(pg_database_size("
                                           "current_database()))")}
                if "lists" in only:
                    out["lists"] = lists(url, args.requests)
                    cases = [f for label, f in out["lists"].items()
                             if not label.startswith("ceiling")]
                    p99s = [f["p99_ms"] for f in cases]
                    out["lists_worst_p99_ms (target <= 50)"] = max(p99s)
                    out["lists_worst_db_ms"] = max(f["db_ms"] for f in cases)
                    out["lists_median_p99_ms"] = percentile(p99s, 50)
                if "purge" in only:
                    out["purge"] = purge(url, server._owner_url_for(name), args.backlog,
                                         args.purge_rows)
            finally:
                server.drop(name)
        if "rss" in only:
            out["rss"] = rss(server, args.rss_drain)
    finally:
        if source and args.drop_template:
            with psycopg.connect(server.admin_url, autocommit=True) as conn:
                conn.execute(sql.SQL("ALTER DATABASE {} IS_TEMPLATE false")
                             .format(sql.Identifier(source)))
            server.drop(source)
    out["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(out, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
