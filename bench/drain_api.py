"""The drain as a user sees it (issue 43): jobs created through ``POST /jobs``, then one
``cronplane worker`` process started and timed until every job is ``SUCCEEDED``; PgQueuer 1.6 in
the same run on the same server; and the repository's older method next to them.

    python -m bench drain-api [--backlogs 20000b,20000,100000,1000000] [--batches-from N]
                              [--clients 16] [--skip-bulk] [--skip-pgqueuer]
                              [--pgqueuer-max-seconds S] [--profile DIR] [--explain DIR]
                              [--baseline COMMIT]
    python -m bench drain-api --batch 10000 [--rounds 2]     # issue 44's batch bound
    python -m bench drain-api --why [--backlogs N]            # why the two methods disagreed

Per backlog, each on its own fresh, migrated database:

* **api**: a real ``cronplane serve`` (defaults, execution plane off: it only answers the API)
  takes ``hey -n BACKLOG -c CLIENTS`` ``POST /jobs`` (each commits its job and its audit event).
  The serve stays up. Then ``cronplane worker`` (defaults: 8 executor threads, elected leader, so
  its scheduler, health evaluator and audit sealer run too, with a development audit key) is
  started, and the wall clock runs from its ``Popen`` until every job is ``SUCCEEDED`` (read from
  the status counters, 20 ms apart). Process start-up is counted, as a user counts it. Also the
  database-clock window (first attempt's start → last finish) the older method uses, CPU per job
  (worker, its Postgres backends), what the Postgres backends of the database were doing (a
  ``pg_stat_activity`` sample every 50 ms) and the ``POST /jobs`` rate while the backlog was made.
  A backlog of ``--batches-from`` jobs or more (default 1,000,000), or written ``20000b``, is
  made with ``POST /batches`` of 1,000 jobs instead (the same job bodies, one ``batch.create``
  audit event per 1,000 jobs, the jobs carry a batch id so every claim and completion also
  keeps the batch's counts): ``POST /jobs`` makes 300-600 jobs/s on the shared box, an hour for
  a million. The rate at the last backlog over the first is printed (write both ``…b`` for a
  same-method ratio).
* **baseline** (``--baseline COMMIT``): the same api drain before it with the whole code of
  COMMIT (``git archive`` of its ``backend/src`` and ``migrations``): its migrations make the
  database, its serve takes the requests, its worker drains (a worker refuses a schema it does
  not know, so a baseline worker on this tree's schema cannot run).
* **bulk**: the older method (``bench queue --only drain``): ``enqueue_many`` in batches of
  10,000, ``VACUUM ANALYZE``, then the worker, timed from its first claim.
* **pgqueuer**: ``queries.enqueue`` in batches of 10,000, then ``QueueManager.run`` in drain mode,
  timed from ``run`` (its start-up included) to the queue being empty; with
  ``--pgqueuer-max-seconds`` stopped then, its rate being of the jobs it ran.

With ``--explain DIR`` the worker is paused (SIGSTOP) at 2, 50 and 90 % of each api drain while
the claim and the completion run under ``EXPLAIN (ANALYZE, BUFFERS)`` in a rolled-back
transaction (plans in DIR, the paused time taken out of the rate).

With ``--batch N``: N jobs in one batch with an ``on_complete`` callback (``POST /batches`` and
``POST /batches/{id}/jobs``) against the same N jobs made alone (``POST /jobs``), alternating.

With ``--profile DIR`` the api drain's worker is recorded by ``py-spy`` (raw folded stacks, in
DIR) and each statement's share of the active samples is printed.

The box is small and shared: compare ratios measured in the same run, never absolutes across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import requests
from bench.api import PASSWORD, Serve, free_port, login
from bench.databases import REPO, BenchServer
from bench.queue import cpu_seconds, cronplane_drain, pgqueuer_drain, query, scalar

CRONPLANE = str(Path(sys.executable).with_name("cronplane"))
PY_SPY = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
_SUCCEEDED = "SELECT coalesce(sum(count), 0) FROM job_status_counts WHERE status = 'SUCCEEDED'"


def api_enqueue(url: str, base: str, token: str, backlog: int, clients: int) -> dict[str, Any]:
    """``backlog`` × ``POST /jobs`` with ``hey``; the jobs and audit events that exist after."""
    started = time.perf_counter()
    out = subprocess.run(
        ["hey", "-n", str(backlog), "-c", str(clients), "-m", "POST", "-t", "60",
         "-T", "application/json", "-H", f"Authorization: Bearer {token}",
         "-d", '{"handler": "noop", "payload": {}}', base + "/api/v1/jobs"],
        capture_output=True, text=True, check=True).stdout
    seconds = time.perf_counter() - started
    codes = {int(c): int(n) for c, n in re.findall(r"\[(\d{3})\]\s+(\d+) responses", out)}
    jobs = scalar(url, "SELECT count(*) FROM jobs")
    events = scalar(url, "SELECT count(*) FROM audit_events ")
    if jobs != backlog or sum(n for c, n in codes.items() if c < 300) != backlog:
        raise RuntimeError(f"POST /jobs made {jobs} jobs of {backlog}: {codes}")
    return {"post_per_s": round(backlog / seconds), "codes": codes, "audit_events": events}


def batches_enqueue(url: str, base: str, token: str, backlog: int, clients: int, *,
                    per_batch: int = 1000) -> dict[str, Any]:
    """``backlog`` jobs as ``POST /batches`` of ``per_batch`` jobs each (no callback), ``clients``
    requests at a time: one audit event (``batch.create``) per batch, not one per job. The path
    for a 1,000,000-job backlog on a shared box, where ``POST /jobs`` makes ~300-600 jobs/s."""
    body = json.dumps({"jobs": [{"handler": "noop", "payload": {}}] * per_batch}).encode()
    sizes = [per_batch] * (backlog // per_batch) + ([backlog % per_batch] if backlog % per_batch
                                                     else [])
    bodies = {per_batch: body}
    for size in set(sizes) - {per_batch}:
        bodies[size] = json.dumps({"jobs": [{"handler": "noop", "payload": {}}] * size}).encode()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    codes: Counter[int] = Counter()
    lock = threading.Lock()
    todo = list(sizes)

    def client() -> None:
        with requests.Session() as session:
            while True:
                with lock:
                    if not todo:
                        return
                    size = todo.pop()
                code = session.post(base + "/api/v1/batches", data=bodies[size],
                                    headers=headers, timeout=300).status_code
                with lock:
                    codes[code] += 1

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    jobs = scalar(url, "SELECT count(*) FROM jobs")
    events = scalar(url, "SELECT count(*) FROM audit_events")
    if jobs != backlog or sum(n for c, n in codes.items() if c < 300) != len(sizes):
        raise RuntimeError(f"POST /batches made {jobs} jobs of {backlog}: {dict(codes)}")
    return {"post_per_s": round(backlog / seconds), "codes": dict(codes),
            "audit_events": events, "via": f"POST /batches of {per_batch}"}


class ActivitySampler:
    """What the database's backends are doing, every ``interval`` s, by statement (its name
    comment or first words) and wait event."""

    def __init__(self, url: str, interval: float = 0.05) -> None:
        self.url = url
        self.interval = interval
        self.samples: Counter[str] = Counter()
        self.ticks = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="activity-sampler", daemon=True)

    def __enter__(self) -> ActivitySampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        database = urlsplit(self.url).path.lstrip("/")
        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self._stop.wait(self.interval):
                rows = conn.execute(
                    "SELECT query, wait_event_type, wait_event FROM pg_stat_activity "
                    "WHERE datname = %s AND state = 'active' AND pid <> pg_backend_pid()",
                    (database,)).fetchall()
                self.ticks += 1
                for statement, wait_type, wait in rows:
                    self.samples[f"{_label(statement)} [{wait_type or 'CPU'}:{wait or '-'}]"] += 1

    def shares(self, top: int = 8) -> dict[str, float]:
        return {label: round(n / max(1, self.ticks), 2)
                for label, n in self.samples.most_common(top)}


def _label(statement: str) -> str:
    text = " ".join(statement.split())
    # (the claim by its comment: pg_stat_activity keeps the first 1,024 bytes of a statement)
    for marker, name in (("claims up to", "claim"), ("INSERT INTO attempts", "claim"),
                         ("unnest(%", "complete"), ("unnest($", "complete"), ("audit_seals", "audit seal"),
                         ("heartbeat_at = now()", "heartbeat"), ("lease_expires_at < now()",
                                                                 "watchdog")):
        if marker in text:
            return name
    return text[:60]


# How the claim and the completion run at a point of the drain: the worker is stopped (SIGSTOP:
# its statements in flight finish, it sends no more), both statements run under EXPLAIN (ANALYZE,
# BUFFERS) in a transaction that is rolled back, and the worker continues. The paused time is
# taken out of the drain's wall clock. The completion is of the attempts the stopped worker holds.
def explain_point(url: str, out: Path, label: str) -> dict[str, Any]:
    from cronplane.storage.job_store import busy_lanes
    from cronplane.storage.queries import QUERIES

    def run(conn: psycopg.Connection[Any], statement: str, params: dict[str, Any]) -> str:
        cur = psycopg.ClientCursor(conn)
        try:
            cur.execute("EXPLAIN (ANALYZE, BUFFERS) " + statement, params)
            return "\n".join(r[0] for r in cur.fetchall())
        finally:
            conn.rollback()

    def summary(plan: str) -> dict[str, Any]:
        hit = re.search(r"Buffers: shared hit=(\d+)(?: read=(\d+))?", plan)
        return {"ms": float(re.findall(r"Execution Time: ([\d.]+)", plan)[-1]),
                "buffers_hit": int(hit.group(1)) if hit else 0,
                "buffers_read": int(hit.group(2) or 0) if hit else 0}

    result: dict[str, Any] = {}
    with psycopg.connect(url) as conn:
        claim = run(conn, QUERIES["claim_jobs"], {"limit": 264, "worker_id": "bench-explain",
                                                  "lease_seconds": 30, "queues": None,
                                                  # as the draining worker's claims: its lane busy
                                                  **busy_lanes([("default", "default")])})
        held = conn.execute("SELECT a.id, a.job_id, a.number FROM attempts a "
                            "WHERE a.status = 'RUNNING' ORDER BY a.id LIMIT 1000").fetchall()
        conn.rollback()
        text = f"-- claim_jobs (limit 264)\n{claim}\n"
        result["claim"] = summary(claim)
        if held:
            n = len(held)
            complete = run(conn, QUERIES["complete_attempts"], {
                "attempt_ids": [h[0] for h in held], "job_ids": [h[1] for h in held],
                "numbers": [h[2] for h in held], "outcomes": ["SUCCEEDED"] * n,
                "results": [None] * n, "errors": [None] * n, "delays": [0.0] * n,
                "queued": [0.0] * n})
            text += f"\n-- complete_attempts ({n} outcomes)\n{complete}\n"
            result["complete"] = {**summary(complete), "outcomes": n}
        dead = conn.execute("SELECT n_dead_tup, n_live_tup, autovacuum_count "
                            "FROM pg_stat_user_tables WHERE relname = 'jobs'").fetchone()
        result["jobs_dead_live_vacuums"] = list(dead) if dead else None
    out.mkdir(parents=True, exist_ok=True)
    (out / f"explain-{label}.txt").write_text(text)
    return result


def api_drain(server: BenchServer, backlog: int, clients: int, *, profile: Path | None = None,
              via: str = "jobs", explain: Path | None = None,
              tree: Path | None = None) -> dict[str, Any]:
    """One api drain on a fresh database. ``tree``: another checkout's code (``--baseline``),
    whole: its migrations make the database, its serve takes the requests, its worker drains."""
    if tree is None:
        name, url = server.create()
    else:
        name, owner_url = server.create(migrate=False)
        url = server.runtime_url(name)
    try:
        pythonpath = None if tree is None else str(tree / "backend" / "src")
        if pythonpath is not None:
            _in_tree(pythonpath, "from cronplane.storage import migrator; "
                                 f"migrator.upgrade({owner_url!r}, "
                                 f"runtime_role=migrator.current_role({url!r}))")
        with tempfile.TemporaryDirectory(prefix="bench-drain-") as data_dir:
            serve = Serve(url, free_port(), pythonpath=pythonpath)
            try:
                token = _login(url, serve.base, pythonpath)
                enqueue = api_enqueue if via == "jobs" else batches_enqueue
                made = enqueue(url, serve.base, token, backlog, clients)
                print(f"  api {backlog:,}{'' if tree is None else ' (baseline)'}: "
                      f"{made.get('via', 'POST /jobs')} {made['post_per_s']:,} jobs/s, "
                      f"{made['audit_events']:,} audit events", flush=True)
                result = _time_worker(url, backlog, data_dir, profile, explain=explain,
                                      pythonpath=pythonpath,
                                      label=f"{via}-{'' if tree is None else 'baseline-'}")
            finally:
                serve.stop()
    finally:
        server.drop(name)
    return {**made, **result}


def _in_tree(pythonpath: str, code: str) -> None:
    subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": pythonpath},
                   check=True)


def _login(url: str, base: str, pythonpath: str | None) -> str:
    if pythonpath is None:
        return login(url, base, "OPERATOR")
    # The user is made by the tree's own code (its users table may differ from this one's).
    _in_tree(pythonpath, f"""
from cronplane.config import Settings
from cronplane.management.context import ManagementContext
from cronplane.management.users import create_user_cli
ctx = ManagementContext.build(Settings(secret_key="unused"), {url!r})
create_user_cli(ctx, username="bench-operator", password={PASSWORD!r}, role="OPERATOR")
ctx.db.close()""")
    response = requests.post(base + "/api/v1/auth/login", timeout=10,
                             json={"username": "bench-operator", "password": PASSWORD})
    response.raise_for_status()
    return str(response.json()["access_token"])


def checkout(commit: str) -> Path:
    """The whole code of ``commit`` (backend/src and migrations) in a new temporary directory."""
    target = Path(tempfile.mkdtemp(prefix="bench-baseline-"))
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "backend/src",
                              "migrations"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def _time_worker(url: str, backlog: int, data_dir: str, profile: Path | None, *,
                 pythonpath: str | None = None, explain: Path | None = None,
                 label: str = "") -> dict[str, Any]:
    database = urlsplit(url).path.lstrip("/")
    env = {**os.environ, "DATABASE_URL": url, "CRONPLANE_LOG_LEVEL": "WARNING",
           "CRONPLANE_DATA_DIR": data_dir}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath  # another tree's worker (before/after in one run)
    explained: dict[str, Any] = {}
    points = [0.02, 0.5, 0.9] if explain is not None else []
    paused = 0.0
    # The serve's backends are still up, with the CPU they spent on the POST requests: only
    # what the database's backends use from here on is the drain's.
    before = cpu_seconds(os.getpid(), database)[1]
    with ActivitySampler(url) as sampler:
        started = time.perf_counter()
        proc = subprocess.Popen([CRONPLANE, "worker"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        spy = None
        if profile is not None:
            profile.mkdir(parents=True, exist_ok=True)
            spy = subprocess.Popen([PY_SPY, "record", "--pid", str(proc.pid), "--format", "raw",
                                    "--rate", "200", "--nonblocking", "--output",
                                    str(profile / f"worker-{backlog}.txt")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            pause = threading.Event()
            with psycopg.connect(url, autocommit=True) as conn:
                while (done := conn.execute(_SUCCEEDED).fetchone()[0]) < backlog:  # type: ignore[index]
                    if points and done >= points[0] * backlog and explain is not None:
                        point = points.pop(0)
                        stopped = time.perf_counter()
                        os.kill(proc.pid, signal.SIGSTOP)
                        try:
                            time.sleep(0.5)  # its statements in flight end
                            explained[f"{point:.0%}"] = explain_point(
                                url, explain, f"{label}{backlog}-{point:.0%}")
                        finally:
                            os.kill(proc.pid, signal.SIGCONT)
                        paused += time.perf_counter() - stopped
                        print(f"    {point:.0%} drained: {explained[f'{point:.0%}']}", flush=True)
                    if proc.poll() is not None:
                        raise RuntimeError("cronplane worker exited during the drain")
                    if time.perf_counter() - started > 1800:
                        raise RuntimeError("drain took over 30 minutes")
                    pause.wait(0.02)
            seconds = time.perf_counter() - started - paused
            cpu = cpu_seconds(proc.pid, database)
        finally:
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(30)
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
    row = query(url, """
        SELECT (SELECT min(started_at) FROM attempts) AS first_start,
               (SELECT max(finished_at) FROM jobs) AS last_finish,
               (SELECT count(*) FROM attempts) AS attempts,
               (SELECT count(*) FROM attempts WHERE status = 'SUCCEEDED') AS succeeded""")[0]
    if not (row["attempts"] == row["succeeded"] == backlog):
        raise RuntimeError(f"drain lost or duplicated work: {row}")
    window = (row["last_finish"] - row["first_start"]).total_seconds() - paused
    return {"seconds": round(seconds, 2), "jobs_per_s": round(backlog / seconds),
            "db_window_jobs_per_s": round(backlog / window),
            "worker_cpu_us_per_job": round(cpu[0] / backlog * 1e6),
            "postgres_cpu_us_per_job": round((cpu[1] - before) / backlog * 1e6),
            "active_backends": sampler.shares(),
            **({"explain": explained} if explain is not None else {})}


def seal_all(url: str, data_dir: str) -> int:
    """Seal every audit event now, with the key the worker will find in ``data_dir``."""
    from cronplane.config import Settings
    from cronplane.execution.audit_sealer import AuditSealer
    from cronplane.storage.audit_store import AuditChainStore
    from cronplane.storage.database import Database

    keyring = Settings(data_dir=Path(data_dir)).with_audit_key().audit_keyring()
    assert keyring is not None
    db = Database(url, application_name="bench-sealer", pool_size=2)
    try:
        sealer = AuditSealer(AuditChainStore(db), keyring, interval=1.0, anchor_path=None)
        while sealer.seal_once() is not None:
            pass
    finally:
        db.close()
    return int(scalar(url, "SELECT count(*) FROM audit_seals"))


# What differs between the two methods, one cause at a time, on clones of one API-made backlog:
# name: (audit events sealed beforehand, VACUUM ANALYZE beforehand). The code before and after
# a change is compared with --baseline instead (a worker runs only on the schema it knows).
WHY_VARIANTS: dict[str, tuple[bool, bool]] = {
    "as made by the API": (False, False),
    "audit events sealed beforehand": (True, False),
    "VACUUM ANALYZE beforehand": (False, True),
    "sealed and VACUUM ANALYZE": (True, True),
}


def why(server: BenchServer, backlog: int, clients: int) -> dict[str, Any]:
    """One API-made backlog (serve stopped after it), then a worker on a clone of it per
    variant of WHY_VARIANTS, and the first two again at the end, so drift shows."""
    name, url = server.create()
    out: dict[str, Any] = {}
    try:
        serve = Serve(url, free_port())
        try:
            token = login(url, serve.base, "OPERATOR")
            out["made"] = api_enqueue(url, serve.base, token, backlog, clients)
        finally:
            serve.stop()
        variants = list(WHY_VARIANTS)
        rates: dict[str, list[int]] = {v: [] for v in variants}
        for variant in [*variants, *variants[:2]]:
            sealed, vacuumed = WHY_VARIANTS[variant]
            clone, clone_url = server.clone(name)
            try:
                with tempfile.TemporaryDirectory(prefix="bench-drain-") as data_dir:
                    if sealed:
                        seal_all(clone_url, data_dir)
                    if vacuumed:
                        query(clone_url, "VACUUM ANALYZE jobs")
                    result = _time_worker(clone_url, backlog, data_dir, None)
            finally:
                server.drop(clone)
            rates[variant].append(result["jobs_per_s"])
            print(f"  why {backlog:,}, {variant}: {result['jobs_per_s']:,} jobs/s; CPU/job "
                  f"worker {result['worker_cpu_us_per_job']} us, postgres "
                  f"{result['postgres_cpu_us_per_job']} us; {result['active_backends']}",
                  flush=True)
        out["jobs_per_s"] = rates
    finally:
        server.drop(name)
    return out


# Issue 44's bound: a batch with a callback drains at ≥ 90% of the same jobs made alone.
def batch_vs_alone(server: BenchServer, jobs: int, clients: int, rounds: int) -> dict[str, Any]:
    """``jobs`` independent jobs (``POST /jobs``) and one batch of ``jobs`` jobs with an
    ``on_complete`` callback (``POST /batches`` of 1,000, then ``POST /batches/{id}/jobs`` of
    1,000 until it holds ``jobs``), each on a fresh database, alternating ``rounds`` times; each
    drained by one ``cronplane worker`` timed from its start until every job (the callback
    included) is SUCCEEDED. The rate counts the ``jobs`` jobs, not the callback."""
    rates: dict[str, list[int]] = {"alone": [], "batch with callback": []}
    for _ in range(rounds):
        for kind, kept in rates.items():
            with server.fresh() as url, \
                    tempfile.TemporaryDirectory(prefix="bench-drain-") as data_dir:
                serve = Serve(url, free_port())
                try:
                    token = login(url, serve.base, "OPERATOR")
                    if kind == "alone":
                        api_enqueue(url, serve.base, token, jobs, clients)
                        total = jobs
                    else:
                        _one_batch(serve.base, token, jobs)
                        total = jobs + 1
                        if scalar(url, "SELECT count(*) FROM jobs") != total:
                            raise RuntimeError("the batch was not made whole")
                    result = _time_worker(url, total, data_dir, None)
                finally:
                    serve.stop()
            rate = round(jobs / result["seconds"])
            kept.append(rate)
            print(f"  {jobs:,} jobs, {kind}: {rate:,} jobs/s; CPU/job worker "
                  f"{result['worker_cpu_us_per_job']} us, postgres "
                  f"{result['postgres_cpu_us_per_job']} us", flush=True)
    alone, batch = (sorted(v)[len(v) // 2] for v in rates.values())
    return {"jobs_per_s": rates, "batch / alone (medians)": round(batch / alone, 2)}


def _one_batch(base: str, token: str, jobs: int) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    body = [{"handler": "noop", "payload": {}}] * min(jobs, 1000)
    made = requests.post(base + "/api/v1/batches", headers=headers, timeout=120, json={
        "jobs": body, "on_complete": {"handler": "noop", "payload": {}}})
    made.raise_for_status()
    batch_id = made.json()["id"]
    for start in range(1000, jobs, 1000):
        added = requests.post(f"{base}/api/v1/batches/{batch_id}/jobs", headers=headers,
                              timeout=120, json={"jobs": body[:min(1000, jobs - start)]})
        added.raise_for_status()


def run(server: BenchServer, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"cpus": os.cpu_count(),
                           "load_average_at_start": [round(x, 1) for x in os.getloadavg()]}
    baseline = checkout(args.baseline) if args.baseline else None
    for entry in args.backlogs.split(","):
        # "20000b": made with POST /batches whatever --batches-from says (a same-method ratio)
        backlog = int(entry.rstrip("b"))
        row: dict[str, Any] = {}
        via = "batches" if backlog >= args.batches_from or entry.endswith("b") else "jobs"
        if baseline is not None:
            row["baseline"] = api_drain(server, backlog, args.clients, via=via, tree=baseline,
                                        explain=args.explain)
            print(f"  api {backlog:,} (baseline {args.baseline}): "
                  f"{row['baseline']['jobs_per_s']:,} jobs/s", flush=True)
        row["api"] = api_drain(server, backlog, args.clients, profile=args.profile, via=via,
                               explain=args.explain)
        print(f"  api {backlog:,}: {row['api']['jobs_per_s']:,} jobs/s "
              f"(database window {row['api']['db_window_jobs_per_s']:,})", flush=True)
        if baseline is not None:
            row["api / baseline"] = round(row["api"]["jobs_per_s"]
                                          / row["baseline"]["jobs_per_s"], 2)
        if not args.skip_pgqueuer:
            with server.fresh(migrate=False) as url:
                row["pgqueuer"] = pgqueuer_drain(url, backlog,
                                                 max_seconds=args.pgqueuer_max_seconds)
            print(f"  pgqueuer {backlog:,}: {row['pgqueuer']['jobs_per_s']:,.0f} jobs/s "
                  f"({row['pgqueuer']['ran']:,} jobs run)", flush=True)
            row["api / pgqueuer"] = round(row["api"]["jobs_per_s"]
                                          / row["pgqueuer"]["jobs_per_s"], 2)
        if not args.skip_bulk:
            with server.fresh() as url:
                row["bulk"] = cronplane_drain(url, backlog)
            print(f"  bulk {backlog:,}: {row['bulk']['jobs_per_s']:,.0f} jobs/s", flush=True)
        out[entry] = row
        print(f"  {entry}: {json.dumps(row, default=str)}", flush=True)
    rates = {b: out[b]["api"]["jobs_per_s"] for b in out if b.rstrip("b").isdigit()}
    if len(rates) > 1:
        first, last = next(iter(rates)), list(rates)[-1]
        out[f"api rate at {last} / at {first}"] = round(rates[last] / rates[first], 2)
    out["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench drain-api", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--backlogs", default="20000b,20000,100000,1000000")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--skip-bulk", action="store_true")
    parser.add_argument("--skip-pgqueuer", action="store_true")
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument("--explain", type=Path, default=None,
                        help="EXPLAIN (ANALYZE, BUFFERS) of the claim and the completion at 2, "
                             "50 and 90%% of each api drain (worker paused meanwhile), in DIR")
    parser.add_argument("--batches-from", type=int, default=1_000_000,
                        help="make backlogs of at least this size with POST /batches of 1,000 "
                             "jobs (one audit event each) instead of POST /jobs")
    parser.add_argument("--why", action="store_true",
                        help="instead: the api drain of each backlog on clones of one backlog, "
                             "with its audit events sealed and/or VACUUM ANALYZE beforehand")
    parser.add_argument("--baseline", default=None, metavar="COMMIT",
                        help="also, before each api drain, the same drain by the code of COMMIT "
                             "(git archive of its backend/src and migrations: its own migrated "
                             "database, serve and worker), for a before/after in one run")
    parser.add_argument("--batch", type=int, default=0, metavar="N",
                        help="instead: N jobs in one batch with an on_complete callback against "
                             "the same N jobs alone (issue 44), --rounds times each")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--pgqueuer-max-seconds", type=float, default=None,
                        help="stop PgQueuer's drain after this long; its rate is then of the "
                             "jobs it ran")
    args = parser.parse_args(argv)
    if shutil.which("hey") is None:
        raise SystemExit("bench drain-api: needs hey (apt-get install -y hey)")
    server = BenchServer(args.database_url, prefix="bench_drain")
    if args.batch:
        result = batch_vs_alone(server, args.batch, args.clients, args.rounds)
        print(json.dumps(result, indent=2, default=str), flush=True)
        return 0
    if args.why:
        result = {b: why(server, int(b), args.clients)
                  for b in args.backlogs.split(",")}
        print(json.dumps(result, indent=2, default=str), flush=True)
        return 0
    print(json.dumps(run(server, args), indent=2, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
