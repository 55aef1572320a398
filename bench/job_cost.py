"""What one job costs on its way through claim → run → complete (issue 43), in CPU-seconds per
10,000 jobs: the cronplane process's and Postgres's, not wall time (the box is shared and noisy;
CPU time is what survives the noise).

    python -m bench job-cost [--jobs 10000] [--kinds plain,fire] [--processes worker,serve]
                             [--rounds 2] [--before OTHER/backend/src] [--ready-in 15]
                             [--profile DIR]

One run = a fresh database migrated by the tree under test, ``--jobs`` ready noop jobs preloaded
(by that tree's code), their ``run_at`` moved to ``--ready-in`` seconds ahead, one real
``cronplane worker`` (8 executor threads, elected leader: its scheduler, health evaluator and
sealer run too) or ``cronplane serve`` (execution on: gunicorn plus the execution plane, the
multiprocess metrics of a served process) started meanwhile, so start-up is over before the jobs
are due; then measured from the due instant until every job is ``SUCCEEDED``:

* **process CPU**: the process and everything it forks, from a cgroup v1 ``cpuacct`` group it
  is started in (``/sys/fs/cgroup/cpuacct/bench-job-cost-proc``); without one, the tree's
  ``/proc`` times (psutil, children included).
* **Postgres CPU**: the whole bench Postgres server (postmaster, every backend, autovacuum,
  WAL writer, checkpointer) in its own ``cpuacct`` group (``…/bench-job-cost-pg``; only a server
  this repository's bench started is moved); without one, the sum over the server's processes
  alive at the end (exited backends lost).
* the same two over the ``TAIL`` (3) seconds after the last job finished, apart: what the jobs
  leave behind (the leader's health evaluation of the schedules whose runs ended).
* the wall rate (due instant → last ``SUCCEEDED`` seen, polled every 100 ms), the database
  window (first attempt started → last job finished) and the load average.

Kinds: ``plain`` jobs (``enqueue_many``), and ``fire``: the jobs of ``--jobs`` schedules fired
once by the leader's own fire statement (``ScheduleStore.fire_due``: fire key, schedule, a
``job_outcomes`` row per schedule on completion), as a burst of schedules due in one second
makes them. ``--before SRC`` runs another tree (e.g. ``git archive main backend/src
migrations``, extracted: SRC is its ``backend/src``) on the same kind of preload, interleaved:
before, after, before, after. ``--profile DIR`` records each run's process with ``py-spy``
(raw folded stacks, 500 Hz, threads, only the thread holding the GIL: the Python CPU) during
the measured window. ``--statements DIR`` (a ``--database-url`` server with
``pg_stat_statements`` preloaded and ``track_functions = all``) keeps each run's statements and
trigger functions by time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil
import psycopg
from bench.api import free_port
from bench.databases import REPO, BenchServer

CRONPLANE = str(Path(sys.executable).with_name("cronplane"))
PY_SPY = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
CGROUP = Path("/sys/fs/cgroup/cpuacct")
_SUCCEEDED = "SELECT coalesce(sum(count), 0) FROM job_status_counts WHERE status = 'SUCCEEDED'"
TAIL = 3.0  # seconds measured after the last job finished, reported apart
YEARLY = "0 0 0 1 1 *"  # fired once here by the bench; never again during a run


# -- CPU meters ------------------------------------------------------------------------------------
class Group:
    """A cgroup v1 cpuacct group (made if missing), or None when there is none to use."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def make(cls, name: str) -> Group | None:
        path = CGROUP / name
        try:
            path.mkdir(exist_ok=True)
            (path / "cpuacct.usage").read_text()
            return cls(path)
        except OSError:
            return None

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def seconds(self) -> float:
        return int((self.path / "cpuacct.usage").read_text()) / 1e9


def _tree_seconds(root: psutil.Process, *, include_root: bool = True) -> float:
    total = 0.0
    for proc in ([root] if include_root else []) + root.children(recursive=True):
        try:
            t = proc.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except psutil.NoSuchProcess:
            continue
    return total


def postmaster(admin_url: str) -> psutil.Process | None:
    """The bench's own Postgres server (its data directory inside this repository), or None."""
    try:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            row = conn.execute("SELECT setting FROM pg_settings "
                               "WHERE name = 'data_directory'").fetchone()
    except psycopg.Error:
        return None
    if row is None:
        return None
    data = Path(row[0]).resolve()
    if REPO.resolve() not in data.parents:
        return None  # a server we did not start: measured by its processes, never moved
    return psutil.Process(int((data / "postmaster.pid").read_text().split()[0]))


class PostgresMeter:
    def __init__(self, admin_url: str) -> None:
        self.root = postmaster(admin_url)
        self.group = Group.make("bench-job-cost-pg") if self.root is not None else None
        if self.group is not None and self.root is not None:
            for proc in [self.root, *self.root.children(recursive=True)]:
                with contextlib.suppress(OSError, psutil.NoSuchProcess):
                    self.group.add(proc.pid)  # backends forked later are in it from birth
        self.how = "cgroup" if self.group else "processes"

    def seconds(self) -> float:
        if self.group is not None:
            return self.group.seconds()
        return _tree_seconds(self.root) if self.root is not None else float("nan")


# -- preload (runs in the tree under test: python -m bench job-cost --preload …) ------------------
def preload(url: str, kind: str, jobs: int, ready_in: float) -> dict[str, Any]:
    started = time.perf_counter()
    if kind == "plain":
        from bench.queue import preload as bulk

        bulk(url, jobs)
    else:
        _fires(url, jobs)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE jobs")
        due = conn.execute(
            "UPDATE jobs SET run_at = now() + make_interval(secs => %s) "
            "WHERE status = 'PENDING' RETURNING extract(epoch FROM run_at)::float8",
            (ready_in,)).fetchall()
        count = conn.execute("SELECT count(*) FROM jobs WHERE status = 'PENDING'").fetchone()
    if not due or not count or count[0] != jobs:
        raise RuntimeError(f"preloaded {count} jobs of {jobs}")
    return {"due": due[0][0], "preload_s": round(time.perf_counter() - started, 1)}


def _fires(url: str, count: int) -> None:
    from cronplane.config import Settings
    from cronplane.management import schedules
    from cronplane.management.actor import Actor
    from cronplane.management.context import ManagementContext
    from cronplane.storage.lease_store import LEADER_LEASE, LeaseStore
    from cronplane.storage.schedule_store import ScheduleStore

    ctx = ManagementContext.build(Settings(secret_key="unused"), url)  # noqa: S106
    try:
        schedules.create(ctx, Actor.system(), {"name": "cost-0", "handler": "noop",
                                               "cron": YEARLY})
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("""
                INSERT INTO schedules (name, description, handler, payload, cron, timezone,
                                       paused, priority, max_attempts, timeout_seconds, overlap,
                                       misfire, project, queue, next_run_at, alerts, notify)
                SELECT 'cost-' || g, s.description, s.handler, s.payload, s.cron, s.timezone,
                       s.paused, s.priority, s.max_attempts, s.timeout_seconds, s.overlap,
                       s.misfire, s.project, s.queue, s.next_run_at, s.alerts, s.notify
                  FROM schedules s, generate_series(1, %s) g WHERE s.name = 'cost-0'""",
                (count - 1,), prepare=False)
            conn.execute("UPDATE schedules SET next_run_at = now() - interval '1 second'")
            conn.execute("VACUUM ANALYZE schedules")
        owner = "bench-job-cost"
        lease = LeaseStore(ctx.db).heartbeat(LEADER_LEASE, owner, 120)
        if not lease.held:
            raise RuntimeError(f"the leader lease is held by {lease.owner}")
        store = ScheduleStore(ctx.db)
        fired = 0
        while True:
            # Due this second, each batch: on a loaded box the last batches would otherwise be
            # past the misfire grace and skipped, not fired.
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("UPDATE schedules SET next_run_at = date_trunc('second', now()) "
                             "WHERE next_run_at <= now()")
            result = store.fire_due(owner, lease.fencing_token, limit=1000)
            if not result.scanned:
                break
            fired += result.enqueued
        LeaseStore(ctx.db).resign(LEADER_LEASE, owner, lease.fencing_token)
        if fired != count:
            raise RuntimeError(f"fired {fired} of {count} schedules")
    finally:
        ctx.db.close()


class Statements:
    """What the run's statements and trigger functions cost (a server with pg_stat_statements
    preloaded and ``track_functions = all``; the bench's embedded one has neither)."""

    def __init__(self, server: BenchServer, name: str) -> None:
        self.admin = server.admin_url
        self.db = urlsplit(self.admin)._replace(path="/" + name).geturl()
        self.name = name

    def reset(self) -> None:
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute("SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database "
                         "WHERE datname = %s), 0)", (self.name,))
        with psycopg.connect(self.db, autocommit=True) as conn:
            conn.execute("SELECT pg_stat_reset()")

    def write(self, path: Path) -> None:
        time.sleep(0.6)  # the statistics collector's flush (track_functions)
        with psycopg.connect(self.admin, autocommit=True) as conn:
            rows = conn.execute(r"""
                SELECT calls, round(total_exec_time::numeric, 1), rows, toplevel,
                       left(regexp_replace(query, '\s+', ' ', 'g'), 160)
                  FROM pg_stat_statements
                 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s)
                 ORDER BY total_exec_time DESC LIMIT 40""", (self.name,)).fetchall()
        with psycopg.connect(self.db, autocommit=True) as conn:
            functions = conn.execute("""
                SELECT funcname, calls, round(total_time::numeric, 1), round(self_time::numeric, 1)
                  FROM pg_stat_user_functions ORDER BY total_time DESC LIMIT 30""").fetchall()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"statements": rows, "functions": functions}, indent=1,
                                   default=str))


# -- one run ---------------------------------------------------------------------------------------
def _in_tree(src: str | None, *args: str) -> str:
    env = {**os.environ}
    if src is not None:
        env["PYTHONPATH"] = f"{src}{os.pathsep}{REPO}"
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode:
        raise RuntimeError(f"{' '.join(args[:4])}… failed:\n{done.stderr[-3000:]}")
    return done.stdout


def run_once(server: BenchServer, pg: PostgresMeter, *, kind: str, process: str, jobs: int,
             src: str | None, ready_in: float, profile: Path | None,
             label: str, statements: Path | None = None) -> dict[str, Any]:
    name, owner_url = server.create(migrate=False)
    url = server.runtime_url(name)
    try:
        _in_tree(src, "-c", "from cronplane.storage import migrator; "
                            f"migrator.upgrade({owner_url!r}, "
                            f"runtime_role=migrator.current_role({url!r}))")
        made = json.loads(_in_tree(src, "-m", "bench", "job-cost", "--preload", url,
                                   "--kinds", kind, "--jobs", str(jobs),
                                   "--ready-in", str(ready_in)))
        with tempfile.TemporaryDirectory(prefix="bench-job-cost-") as data_dir:
            stats = Statements(server, name) if statements is not None else None
            result = {"label": label, "kind": kind, "process": process,
                      **_measure(url, made["due"], process, jobs, data_dir=data_dir, src=src,
                                 pg=pg, profile=profile, label=f"{label}-{kind}-{process}",
                                 stats=stats)}
            if stats is not None and statements is not None:
                stats.write(statements / f"{label}-{kind}-{process}-{name}.json")
            return result
    finally:
        server.drop(name)


def _start(process: str, url: str, data_dir: str, src: str | None,
           group: Group | None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": url, "CRONPLANE_LOG_LEVEL": "WARNING",
           "CRONPLANE_DATA_DIR": data_dir}
    if src is not None:
        env["PYTHONPATH"] = src
    if process == "serve":
        env.update({"CRONPLANE_EXECUTION": "on", "CRONPLANE_PORT": str(free_port()),
                    "CRONPLANE_HOST": "127.0.0.1", "CRONPLANE_SECRET_KEY": "bench-" + "k" * 40})

    def enter() -> None:
        if group is not None:
            group.add(os.getpid())

    return subprocess.Popen([CRONPLANE, process], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=enter)  # noqa: PLW1509 - only writes our own pid


def _measure(url: str, due: float, process: str, jobs: int, *, data_dir: str,
             src: str | None, pg: PostgresMeter, profile: Path | None, label: str,
             stats: Statements | None = None) -> dict[str, Any]:
    group = Group.make("bench-job-cost-proc")
    base = group.seconds() if group is not None else 0.0
    proc = _start(process, url, data_dir, src, group)
    root = psutil.Process(proc.pid)

    def own() -> float:
        return group.seconds() - base if group is not None else _tree_seconds(root)

    spies: list[subprocess.Popen[bytes]] = []
    try:
        if due - time.time() < 2:
            raise RuntimeError("the jobs were due before the process started: raise --ready-in")
        time.sleep(max(0.0, due - time.time() - 0.3))
        if proc.poll() is not None:
            raise RuntimeError(f"cronplane {process} exited during start-up")
        with psycopg.connect(url, autocommit=True) as conn:
            if conn.execute("SELECT count(*) FROM attempts").fetchone() != (0,):
                raise RuntimeError("jobs were claimed before they were due")
            if profile is not None:
                profile.mkdir(parents=True, exist_ok=True)
                for pid in [proc.pid, *(c.pid for c in root.children(recursive=True))]:
                    spies.append(subprocess.Popen(
                        [PY_SPY, "record", "--pid", str(pid), "--format", "raw", "--rate", "500",
                         "--gil",
                         "--nonblocking", "--threads", "--output",
                         str(profile / f"{label}-{pid}.txt")],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            if stats is not None:
                stats.reset()
            load_start = os.getloadavg()
            a_proc, a_pg, a_tree = own(), pg.seconds(), _tree_seconds(root)
            time.sleep(max(0.0, due - time.time()))
            pause = threading.Event()
            while conn.execute(_SUCCEEDED).fetchone()[0] < jobs:  # type: ignore[index]
                if proc.poll() is not None:
                    raise RuntimeError(f"cronplane {process} exited during the drain")
                if time.time() - due > 600:
                    raise RuntimeError("drain took over 10 minutes")
                pause.wait(0.1)
            wall = time.time() - due
            b_proc, b_pg, b_tree = own(), pg.seconds(), _tree_seconds(root)
            load_end = os.getloadavg()
            # What the jobs leave behind once they are finished (the leader's health evaluation
            # of the schedules whose runs ended, the counters' rollups): the next few seconds.
            time.sleep(TAIL)
            c_proc, c_pg = own(), pg.seconds()
            row = conn.execute("""
                SELECT extract(epoch FROM max(j.finished_at) - min(a.started_at))::float8,
                       count(*), count(*) FILTER (WHERE a.status = 'SUCCEEDED')
                  FROM attempts a JOIN jobs j ON j.id = a.job_id""").fetchone()
    finally:
        for spy in spies:
            spy.send_signal(signal.SIGINT)
        for spy in spies:
            spy.wait(30)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert row is not None
    window, attempts, succeeded = row
    if not attempts == succeeded == jobs:
        raise RuntimeError(f"{attempts} attempts, {succeeded} succeeded of {jobs} jobs")
    per = 10_000 / jobs
    return {"process_cpu_s_per_10k": round((b_proc - a_proc) * per, 2),
            "postgres_cpu_s_per_10k": round((b_pg - a_pg) * per, 2),
            "process_tree_cpu_s_per_10k": round((b_tree - a_tree) * per, 2),  # /proc, a check
            "total_cpu_s_per_10k": round((b_proc - a_proc + b_pg - a_pg) * per, 2),
            "tail_process_cpu_s_per_10k": round((c_proc - b_proc) * per, 2),
            "tail_postgres_cpu_s_per_10k": round((c_pg - b_pg) * per, 2),
            "jobs_per_s": round(jobs / wall), "db_window_jobs_per_s": round(jobs / window),
            "startup_cpu_s": round(a_proc, 2),
            "load": [round(load_start[0], 1), round(load_end[0], 1)]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench job-cost", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--kinds", default="plain,fire")
    parser.add_argument("--processes", default="worker,serve")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", default=None, metavar="SRC",
                        help="another tree's backend/src (with its migrations beside it, as "
                             "git archive COMMIT backend/src migrations extracts them): "
                             "measured before this tree's, interleaved")
    parser.add_argument("--ready-in", type=float, default=15.0,
                        help="seconds from the end of the preload to the jobs' run_at (the "
                             "process starts meanwhile)")
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument("--statements", type=Path, default=None, metavar="DIR",
                        help="per run, pg_stat_statements and pg_stat_user_functions of the "
                             "measured window in DIR (a --database-url server that has them)")
    parser.add_argument("--preload", default=None, metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.preload:
        print(json.dumps(preload(args.preload, args.kinds, args.jobs, args.ready_in)))
        return 0
    server = BenchServer(args.database_url, prefix="bench_cost")
    pg = PostgresMeter(server.admin_url)
    sides = [("before", args.before), ("after", None)] if args.before else [("this", None)]
    print(f"job cost: {args.jobs:,} jobs a run, Postgres CPU by {pg.how}, process CPU by "
          f"{'cgroup' if Group.make('bench-job-cost-proc') else 'processes'}", flush=True)
    results = []
    for round_ in range(args.rounds):
        for kind in args.kinds.split(","):
            for process in args.processes.split(","):
                for label, src in sides:
                    result = run_once(server, pg, kind=kind, process=process, jobs=args.jobs,
                                      src=src, ready_in=args.ready_in, profile=args.profile,
                                      label=label, statements=args.statements)
                    result["round"] = round_ + 1
                    print(json.dumps(result), flush=True)
                    results.append(result)
    print(_table(results), flush=True)
    return 0


def _table(results: list[dict[str, Any]]) -> str:
    lines = ["| round | kind | process | code | process CPU s / 10k | Postgres CPU s / 10k | "
             "total | 3 s after: process, Postgres | jobs/s (db window) | load1 start → end |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        lines.append(f"| {r['round']} | {r['kind']} | {r['process']} | {r['label']} | "
                     f"{r['process_cpu_s_per_10k']} | {r['postgres_cpu_s_per_10k']} | "
                     f"{r['total_cpu_s_per_10k']} | {r['tail_process_cpu_s_per_10k']}, "
                     f"{r['tail_postgres_cpu_s_per_10k']} | {r['jobs_per_s']:,} "
                     f"({r['db_window_jobs_per_s']:,}) | {r['load'][0]} → {r['load'][1]} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
