"""``make ha-test``: the failover nemesis against the production-shaped database of ``deploy/ha/``
(etcd, two Patroni nodes of Postgres 15 with ``synchronous_mode``, HAProxy on ``/primary``,
PgBouncer in transaction mode). Not part of ``make test``: it starts a whole cluster and breaks
it for minutes.

Clients enqueue through two ``serve`` processes and two ``worker`` processes run the jobs and the
scheduler, all through PgBouncer (``CRONPLANE_DIRECT_DATABASE_URL``: every node,
``target_session_attrs=read-write``), while ``patronictl switchover``, ``patronictl failover`` and
kill -9 of the primary's postmaster take turns (``CRONPLANE_HA_ROUNDS``, default 30: ten of
each). After each break the cluster heals (the old primary rejoins as synchronous standby)
before the next. Then: 0 acknowledged jobs lost, every one run to success, 0 duplicate fire
keys, no fire time missing from the ledger, 0 answers 500 (503 with Retry-After only, none past
15 s), the audit chain verifies; printed: how long Patroni took to promote and how long from
the new primary to the first job completed on it, for each kind of break (bench/RESULTS.md).

Dependencies are in the mix (issue 44, ``tests/support/dependency_mix.py``): a client adds
diamonds of ``depends_on`` jobs, failing upstreams with a dependent and batches with an
``on_complete`` callback through the API throughout, and a second per-second schedule is chained
to the first (``upstream``). After the run: no downstream started before its upstream
succeeded (a chained fire: the upstream fire of the same time), nothing left WAITING, each
failing upstream's dependent cancelled without running, each callback run to success once with
its batch's exact counts, no fire time of either schedule missing from the ledger."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests

from tests.acceptance.processes import Cluster
from tests.acceptance.serve_process import admin_token
from tests.ha.patroni import Member, Patroni, patroni_cluster
from tests.support.dependency_mix import DependencyMix, MixLoad, check, http_post, unsettled
from tests.support.failover import ApiLoad, duplicate_fire_keys, lost_acknowledged, unfinished
from tests.support.servers import Serve
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.ha, pytest.mark.timeout(3600)]

ROUNDS = int(os.environ.get("CRONPLANE_HA_ROUNDS", "30"))
PORT_BASE = int(os.environ.get("CRONPLANE_HA_PORT_BASE", "25400"))
ACTIONS = ("switchover", "failover", "kill -9")
PASSWORD = "a long bootstrap passphrase 1"
KEYS = {"CRONPLANE_SECRET_KEY": "ha-rehearsal-secret-key-0123456789abcdef",
        "CRONPLANE_AUDIT_KEY": "ha-rehearsal-audit-key-0123456789abcdefgh"}
RESUME_SECONDS = 5.0  # the contract: new primary → every process working within 5 s


def _db_now(url: str) -> datetime:
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        row = conn.execute("SELECT clock_timestamp()").fetchone()
    assert row is not None
    return row[0]  # type: ignore[no-any-return]


def _completed_since(url: str, moment: datetime) -> bool:
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=2) as conn:
            row = conn.execute("SELECT EXISTS (SELECT 1 FROM attempts WHERE status = 'SUCCEEDED' "
                               "AND finished_at >= %s)", (moment,)).fetchone()
        return bool(row and row[0])
    except psycopg.OperationalError:
        return False


def _spread(values: list[float]) -> str:
    if not values:
        return "n/a"
    return (f"median {statistics.median(values):.2f} s, max {max(values):.2f} s "
            f"(n={len(values)})")


def test_nemesis_switchover_failover_kill9_through_pgbouncer_loses_nothing(
        tmp_path: Path) -> None:
    with patroni_cluster(port_base=PORT_BASE) as patroni:
        env = patroni.env
        direct = env["CRONPLANE_DIRECT_DATABASE_URL"]
        pooled = env["DATABASE_URL"]
        db = Cluster(direct, tmp_path)
        done = migrate_schema(env)
        assert done.returncode == 0, done.stdout + done.stderr

        common = {"CRONPLANE_DIRECT_DATABASE_URL": direct, **KEYS,
                  "CRONPLANE_ADMIN_USERNAME": "admin", "CRONPLANE_ADMIN_PASSWORD": PASSWORD,
                  "CRONPLANE_LEASE_TTL_SECONDS": "2", "CRONPLANE_ATTEMPT_LEASE_SECONDS": "3"}
        serves = [Serve(pooled, tmp_path / f"serve-{i}", CRONPLANE_HTTP_THREADS="8", **common)
                  for i in range(2)]
        workers = Cluster(direct, tmp_path, DATABASE_URL=pooled, CRONPLANE_LOG_LEVEL="WARNING",
                          CRONPLANE_WORKER_CONCURRENCY="4", **common)
        load: ApiLoad | None = None
        mix: MixLoad | None = None
        try:
            for serve in serves:
                serve.wait_ready()
            procs = [workers.start(CRONPLANE_DATA_DIR=str(tmp_path / f"worker-{i}"))
                     for i in range(2)]
            workers.wait_registered(procs)
            token = admin_token(serves[0], "admin", PASSWORD, "nemesis")
            headers = {"Authorization": f"Bearer {token}"}
            created = requests.post(serves[0].base + "/api/v1/schedules", headers=headers,
                                    timeout=15, json={"name": "every-second", "handler": "noop",
                                                      "cron": "*/1 * * * * *"})
            assert created.status_code == 201, created.text
            schedule = created.json()["id"]
            chained = requests.post(serves[1].base + "/api/v1/schedules", headers=headers,
                                    timeout=15, json={"name": "chained", "handler": "noop",
                                                      "cron": "*/1 * * * * *",
                                                      "upstream": [{"schedule": schedule}]})
            assert chained.status_code == 201, chained.text
            schedules = [schedule, chained.json()["id"]]
            load = ApiLoad([s.base for s in serves], token, clients=4).start()
            mix = MixLoad(DependencyMix(http_post([s.base for s in serves], token))).start()
            wait_until(lambda: _completed_since(direct, _db_now(direct) - timedelta(seconds=1)),
                       30, "jobs to run before the first break")

            promote: dict[str, list[float]] = {a: [] for a in ACTIONS}
            resume: dict[str, list[float]] = {a: [] for a in ACTIONS}
            api_back: dict[str, list[float]] = {a: [] for a in ACTIONS}
            no_answer: dict[str, list[float]] = {a: [] for a in ACTIONS}
            for round_ in range(ROUNDS):
                action = ACTIONS[round_ % len(ACTIONS)]
                wait_until(patroni.healthy, 180,
                           lambda r=round_: f"the cluster to heal before round {r + 1}: "
                                            f"{patroni.members()}\n{patroni.logs()}", step=0.2)
                old = patroni.primary()
                assert old is not None
                broke = time.monotonic()
                {"switchover": patroni.switchover, "failover": patroni.failover,
                 "kill -9": patroni.kill9}[action](old.name)
                new = wait_until(lambda o=old.name: _new_primary(patroni, o), 120,
                                 f"a new primary after {action} of {old.name}", step=0.05)
                promoted = time.monotonic()
                promote[action].append(promoted - broke)
                since = _db_now(direct)
                wait_until(lambda s=since: _completed_since(direct, s), 60,
                           f"a job to complete on {new.name} after {action}", step=0.05)
                resume[action].append(time.monotonic() - promoted)
                back = wait_until(lambda p=promoted: load.first_ok_after(p), 60,
                                  f"a 2xx from the API after {action}", step=0.05)
                api_back[action].append(back)
                no_answer[action].append(load.outage_after(broke))
                print(f"[ha] round {round_ + 1}/{ROUNDS} {action} {old.name}→{new.name}: "
                      f"promoted after {promote[action][-1]:.2f} s, first job completed "
                      f"{resume[action][-1]:.2f} s and first 2xx {back:.2f} s after that; "
                      f"no 2xx answer for {no_answer[action][-1]:.2f} s", flush=True)
            wait_until(patroni.healthy, 180, "the cluster to heal after the last round", step=0.2)
            acknowledged = load.stop()
            graphs = mix.stop()

            lost = lost_acknowledged(direct, acknowledged)
            assert not lost, f"{len(lost)} acknowledged job(s) lost: {lost[:10]}"
            wait_until(lambda: unfinished(direct, acknowledged) == 0, 180,
                       lambda: f"{unfinished(direct, acknowledged)} acknowledged job(s) to run")
            assert not duplicate_fire_keys(direct), "a fire key was enqueued twice"
            missing = [m for s in schedules for m in _missing_fires(serves[0].base, headers, s, db)]
            for sid in schedules:  # then every chained fire is released, cancelled or expires
                paused = requests.post(f"{serves[0].base}/api/v1/schedules/{sid}/pause",
                                       headers=headers, timeout=15, json={})
                assert paused.status_code == 200, paused.text
            wait_until(lambda: unsettled(direct, graphs.jobs) == 0 and not db.scalar(
                "SELECT count(*) FROM jobs WHERE status IN ('WAITING', 'PENDING', 'RUNNING')"),
                180, lambda: f"{unsettled(direct, graphs.jobs)} job(s) of the mix to settle")
            in_mix = check(direct, graphs)
            chain_runs = db.scalar("SELECT count(*) FROM jobs WHERE schedule_id = %s "
                                   "AND status = 'SUCCEEDED'", schedules[1])
            verify = requests.get(serves[1].base + "/api/v1/audit/verify", headers=headers,
                                  timeout=60)
            assert verify.status_code == 200, verify.text
            answers = load.summary()
            failures = load.failures()
            print(f"\n[ha] {ROUNDS} rounds through PgBouncer "
                  f"({', '.join(f'{n} {a}' for a, n in Counter(ACTIONS[r % 3] for r in range(ROUNDS)).items())}); "
                  f"{len(acknowledged)} jobs acknowledged, 0 lost; answers {answers}; "
                  f"slowest answer {load.slowest():.2f} s; "
                  f"audit verify ok={verify.json().get('ok')}")
            print(f"[ha] dependencies in the mix: {in_mix}, chained schedule ran {chain_runs} "
                  "times; none ran before its upstream, none left WAITING, every callback once "
                  "with exact counts")
            for action in ACTIONS:
                print(f"[ha] {action}: Patroni promoted in {_spread(promote[action])}; "
                      f"new primary → first job completed {_spread(resume[action])}; "
                      f"→ first 2xx {_spread(api_back[action])}; no 2xx answer for "
                      f"{_spread(no_answer[action])}")
            assert not failures, f"answers the contract forbids: {failures[:10]}; {answers}"
            assert not missing, f"fire times missing from the ledger: {missing[:10]}"
            assert verify.json().get("ok") is True, verify.text
            assert all(p.poll() is None for p in procs), "workers must survive every break"
            assert all(s.proc.poll() is None for s in serves), "serve must survive every break"
            slow = {a: [round(v, 2) for v in resume[a] if v > RESUME_SECONDS] for a in ACTIONS}
            assert not any(slow.values()), (
                f"new primary → first job completed took more than {RESUME_SECONDS}s: {slow}")
        finally:
            if load is not None:
                load.stop()
            if mix is not None:
                mix.stop()
            for serve in serves:
                serve.stop()
            workers.stop_all()


def _new_primary(patroni: Patroni, old: str) -> Member | None:
    member = patroni.primary()
    return member if member is not None and member.name != old else None


def migrate_schema(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "cronplane.cli", "migrate"], env=full,
                          capture_output=True, text=True, timeout=300)


def _missing_fires(base: str, headers: dict[str, str], schedule: int,
                   cluster: Cluster) -> list[dict[str, Any]]:
    """Ledger entries with outcome ``missing`` (a fire time with neither a job nor a recorded
    reason) from the schedule's creation to a few seconds ago, in windows the API allows."""
    first = cluster.scalar("SELECT min(fire_time) FROM jobs WHERE schedule_id = %s", schedule)
    end = cluster.scalar("SELECT clock_timestamp()") - timedelta(seconds=5)
    missing: list[dict[str, Any]] = []
    start = first
    while start < end:
        stop = min(start + timedelta(seconds=900), end)
        page = requests.get(f"{base}/api/v1/schedules/{schedule}/fires", headers=headers,
                            timeout=30, params={"after": start.isoformat(),
                                                "before": stop.isoformat()})
        assert page.status_code == 200, page.text
        missing += [e for e in page.json()["items"] if e["outcome"] == "missing"]
        start = stop + timedelta(seconds=1)
    return missing
