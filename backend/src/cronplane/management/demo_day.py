"""A "real day" of data for demos, screenshots and the console's end-to-end flows
(``cronplane seed-demo --day``, ``make run DEMO=1``).

Three projects, thirteen schedules in seven time zones, about a thousand jobs over the last day
with the failures a real installation has (a schedule dying since the morning, a warehouse load
failing with a long traceback, a payload too long for its box), a Slack channel and a webhook
that cannot be reached (so their deliveries die), a queue paused for an incident (so its
schedule is late) and a schedule paused for a holiday freeze.

What a person would do goes through the use cases (projects, schedules, channels, pauses: each
audited as ``system``); the history a day of running would have left is written in bulk and
backdated (``storage/demo_day_store.py``), a job for every fire time since each schedule's
backdated creation, so the fire ledger and the fire check agree with it. Deterministic for a
given start instant. Refuses to run twice (the ``payments`` project marks a seeded day).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cronplane.domain.cron import CronExpression, validate_timezone
from cronplane.domain.keys import schedule_fire_key
from cronplane.domain.notifications import DELIVER_HANDLER, DELIVERY_MAX_ATTEMPTS, DELIVERY_QUEUE
from cronplane.domain.states import Trigger
from cronplane.management import notifications, projects, queues, schedules
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Conflict
from cronplane.storage.demo_day_store import DemoDayStore

MARKER_PROJECT = "payments"
WORKER = "demo-host-1:4242"


class AlreadySeeded(Conflict):
    pass


@dataclass(frozen=True)
class DemoSchedule:
    project: str
    name: str
    handler: str
    cron: str
    history: timedelta  # how long before now it was created (its fire ledger's start)
    timezone: str = "UTC"
    payload: dict[str, Any] = field(default_factory=dict)
    queue: str = "default"
    description: str = ""
    max_attempts: int = 3
    # Outcome of the fire at index i of n (oldest first): "ok", "dead" or "pending".
    outcome: str = "ok"
    alerts: dict[str, Any] = field(default_factory=dict)
    notify: tuple[str, ...] = ()


LONG_TRACEBACK = "\n".join([
    "warehouse load failed: COPY into analytics.events_2026_12 aborted after 3 of 12 partitions",
    "Traceback (most recent call last):",
    '  File "/srv/etl/load.py", line 214, in load_partition',
    "    cursor.copy_expert(sql, stream)",
    '  File "/srv/etl/.venv/lib/python3.12/site-packages/psycopg2/extras.py", line 1103, in '
    "copy_expert",
    "    return super().copy_expert(sql, file, size)",
    "psycopg2.errors.DiskFull: could not extend file \"base/16384/2619_fsm\": No space left on "
    "device. HINT: Check free disk space on warehouse-db-2 (tablespace pg_default, "
    "/var/lib/postgresql/16/main) before retrying the partitions events_2026_12_04 … "
    "events_2026_12_05",
])
LONG_PAYLOAD: dict[str, Any] = {
    "url": "https://partner-api.example.com/v2/settlements/batches?merchant=acme-europe-gmbh"
           "&currency=EUR&from=2026-12-04T00:00:00Z&to=2026-12-05T00:00:00Z&include=refunds,"
           "chargebacks,adjustments,fees&page_size=500",
    "merchants": [f"merchant-{n:04d}-{'eu' if n % 2 else 'us'}-settlement-account" for n in range(12)],
    "note": "Settlement batches for every acquiring bank; a line this long must wrap, not scroll: "
            + "x" * 180,
}

SCHEDULES: tuple[DemoSchedule, ...] = (
    DemoSchedule("default", "heartbeat", "noop", "0 */2 * * * *", timedelta(hours=6),
                 description="Proves the workers are alive."),
    DemoSchedule("default", "flaky-etl", "fail", "0 */5 * * * *", timedelta(hours=24),
                 payload={"message": "extract step failed: upstream returned 503 Service "
                                     "Unavailable (orders-db replica lag 340 s)"},
                 max_attempts=1, outcome="failing-since-morning",
                 description="Nightly-ish ETL; broken since the orders-db replica started "
                             "lagging.",
                 alerts={"on_failure": True, "consecutive_failures": 3},
                 notify=("ops-webhook",)),
    DemoSchedule("default", "webhook-fanout", "noop", "0 * * * * *", timedelta(hours=2),
                 queue="webhooks", outcome="paused-queue",
                 description="Fans partner webhooks out; its queue is paused for INC-4821.",
                 alerts={"max_lateness_seconds": 120}, notify=("ops-webhook",)),
    DemoSchedule("default", "nightly-backup", "sleep", "0 0 2 * * *", timedelta(days=3),
                 timezone="Europe/Paris", payload={"seconds": 0.2}),
    DemoSchedule("default", "weekly-digest", "noop", "0 0 9 * * MON", timedelta(days=1),
                 timezone="America/New_York"),
    DemoSchedule("default", "purge-history", "maintenance.purge_history", "0 30 3 * * *",
                 timedelta(days=2), payload={"older_than_days": 30}),
    DemoSchedule("payments", "card-settlement", "fail", "0 */10 * * * *", timedelta(hours=24),
                 payload={"message": "settlement batch rejected by the acquirer: HTTP 502 from "
                                     + str(LONG_PAYLOAD["url"])},
                 outcome="sometimes",
                 description="Settles the day's card batches with every acquiring bank.",
                 notify=("oncall-slack",), alerts={"on_failure": True}),
    DemoSchedule("payments", "invoice-run", "noop", "0 */15 * * * *", timedelta(hours=24),
                 timezone="Europe/London", payload=LONG_PAYLOAD),
    DemoSchedule("payments", "ledger-reconcile", "sleep", "0 */30 * * * *", timedelta(hours=24),
                 timezone="Asia/Kolkata", payload={"seconds": 0.1}),
    DemoSchedule("payments", "payout-report", "noop", "0 0 6 L * *", timedelta(days=1),
                 timezone="America/Chicago"),
    DemoSchedule("analytics", "warehouse-load", "fail", "0 0 * * * *", timedelta(hours=24),
                 payload={"message": LONG_TRACEBACK}, outcome="failing-recently",
                 description="Loads yesterday's events into the warehouse.",
                 alerts={"on_failure": True, "consecutive_failures": 2}),
    DemoSchedule("analytics", "dashboard-refresh", "noop", "0 */20 * * * *", timedelta(hours=24),
                 timezone="Australia/Sydney"),
    DemoSchedule("analytics", "events-compact", "noop", "0 0 */6 * * *", timedelta(hours=24),
                 timezone="Europe/Berlin"),
)

CHANNELS: tuple[dict[str, Any], ...] = (
    {"project": "default", "name": "ops-webhook", "kind": "webhook",
     "url": "https://hooks.ops.invalid/cronplane", "events": ["job.dead", "schedule.failing",
                                                           "schedule.late"]},
    {"project": "payments", "name": "oncall-slack", "kind": "slack",
     "url": "https://hooks.slack.invalid/services/T000/B000/demo",
     "events": ["job.dead", "job.succeeded", "schedule.failing"]},
)
DELIVERY_ERROR = {
    "webhook": "cannot resolve hooks.ops.invalid: Name or service not known",
    "slack": "cannot resolve hooks.slack.invalid: Name or service not known",
}


@dataclass
class _History:
    """What the seed writes in bulk: jobs, and per job its attempts and delivery records."""

    jobs: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[list[dict[str, Any]]] = field(default_factory=list)
    deliveries: list[list[dict[str, Any]]] = field(default_factory=list)


@dataclass
class SeedReport:
    projects: int = 0
    schedules: int = 0
    channels: int = 0
    jobs: int = 0
    failed_jobs: int = 0
    deliveries: int = 0


def seed_day(ctx: ManagementContext, *, seed: int = 45) -> SeedReport:
    actor = Actor.system()
    if any(p.slug == MARKER_PROJECT for p in projects.list_projects(ctx, actor)):
        raise AlreadySeeded(f"this database already has a seeded day (project {MARKER_PROJECT!r})")
    report = SeedReport()
    projects.create_project(ctx, actor, slug="payments", name="Payments",
                            quotas={"max_schedules": 50, "max_pending_jobs": 5000})
    projects.create_project(ctx, actor, slug="analytics", name="Analytics")
    report.projects = 2
    channel_ids: dict[tuple[str, str], tuple[int, str]] = {}
    for channel_spec in CHANNELS:
        made = notifications.create(ctx, actor, channel_spec)
        channel_ids[(str(channel_spec["project"]), str(channel_spec["name"]))] = (
            made.id, str(channel_spec["kind"]))
        report.channels += 1
    # Paused before the schedules exist: the seeded PENDING fires are what waits behind it.
    queues.update(ctx, actor, "default", "webhooks",
                  {"paused": True, "paused_reason": "partner API outage (INC-4821)"})
    store = DemoDayStore(ctx.db)
    now = store.now()
    rng = random.Random(seed)
    backdated: list[tuple[int, datetime, datetime | None]] = []
    day = _History()
    jobs, attempts, deliveries = day.jobs, day.attempts, day.deliveries
    for spec in SCHEDULES:
        created = schedules.create(ctx, actor, {
            "project": spec.project, "name": spec.name, "handler": spec.handler,
            "cron": spec.cron, "timezone": spec.timezone, "payload": spec.payload,
            "queue": spec.queue, "description": spec.description,
            "max_attempts": spec.max_attempts, "alerts": spec.alerts,
            "notify": list(spec.notify)})
        report.schedules += 1
        # Up to its creation: later fire times are the scheduler's, from next_run_at on.
        times = _fire_times(spec, start=created.created_at - spec.history,
                            end=created.created_at)
        backdated.append((created.id, created.created_at - spec.history,
                          times[-1] if times else None))
        for index, fire_time in enumerate(times):
            outcome = _outcome(spec, index, len(times), rng)
            job, tries = _scheduled_job(spec, created.id, fire_time, outcome, rng)
            jobs.append(job)
            attempts.append(tries)
            deliveries.append([])
            for (project, _), target in channel_ids.items():
                if project == spec.project and outcome == "dead":
                    _add_delivery(day, project, target, job["finished_at"], rng)
        if spec.name == "weekly-digest":
            schedules.pause(ctx, actor, created.id, until=now + timedelta(days=7),
                            reason="holiday freeze")
    for n in range(24):  # ad-hoc work from the API, a few with long payloads
        at = now - timedelta(minutes=rng.randint(5, 23 * 60))
        failed = n % 6 == 0
        payload: dict[str, Any] = ({"message": "failed on purpose"} if failed
                                   else LONG_PAYLOAD if n % 4 == 1 else {"batch": n})
        jobs.append(_job("payments" if n % 2 else "default", "fail" if failed else "noop",
                         payload, "default", at,
                         status="DEAD" if failed else "SUCCEEDED", attempts=1, max_attempts=1,
                         trigger=Trigger.API, requested_by="ci-bot",
                         error="failed on purpose" if failed else None, rng=rng))
        attempts.append([_attempt(1, at, "FAILED" if failed else "SUCCEEDED",
                                  "failed on purpose" if failed else None)])
        deliveries.append([])
    order = sorted(range(len(jobs)), key=lambda i: (jobs[i]["created_at"], i))
    ids = store.write(backdated=backdated, jobs=[jobs[i] for i in order],
                      attempts_of=[attempts[i] for i in order],
                      deliveries_of=[deliveries[i] for i in order])
    report.jobs = len(ids)
    report.failed_jobs = sum(1 for j in jobs if j["status"] == "DEAD"
                             and j["trigger"] != Trigger.NOTIFICATION.value)
    report.deliveries = sum(1 for j in jobs if j["trigger"] == Trigger.NOTIFICATION.value)
    return report


def _fire_times(spec: DemoSchedule, *, start: datetime, end: datetime) -> list[datetime]:
    """Every fire time in ``[start, end]``, as the fire ledger counts them."""
    expression = CronExpression.parse(spec.cron)
    zone = validate_timezone(spec.timezone)
    found: list[datetime] = []
    for instant in expression.iter_after(start - timedelta(microseconds=1), zone):
        if instant > end:
            break
        found.append(instant)
    return found


def _outcome(spec: DemoSchedule, index: int, count: int, rng: random.Random) -> str:
    from_end = count - index
    if spec.outcome == "failing-since-morning":
        return "dead" if from_end <= 61 or rng.random() < 0.05 else "ok"
    if spec.outcome == "failing-recently":
        return "dead" if from_end <= 4 else "ok"
    if spec.outcome == "sometimes":
        return "dead" if rng.random() < 0.2 and from_end > 3 else "ok"
    if spec.outcome == "paused-queue":
        return "pending" if from_end <= 15 else "ok"
    return "ok"


def _iso(at: datetime) -> str:
    return at.isoformat()


def _job(project: str, handler: str, payload: dict[str, Any], queue: str, at: datetime, *,
         status: str, attempts: int, max_attempts: int, trigger: Trigger, requested_by: str,
         error: str | None, rng: random.Random, schedule_id: int | None = None,
         fire_time: datetime | None = None) -> dict[str, Any]:
    started = at + timedelta(milliseconds=rng.randint(40, 900))
    finished = started + timedelta(milliseconds=rng.randint(30, 4000) * max(attempts, 1))
    done = status != "PENDING"
    return {
        "project": project, "handler": handler, "payload": payload, "status": status,
        "queue": queue, "run_at": _iso(at), "attempt_count": attempts if done else 0,
        "max_attempts": max_attempts, "timeout_seconds": None, "schedule_id": schedule_id,
        "fire_time": None if fire_time is None else _iso(fire_time), "trigger": trigger.value,
        "idempotency_key": None if fire_time is None or schedule_id is None
        else schedule_fire_key(schedule_id, fire_time),
        "requested_by": requested_by,
        "result": {"ok": True} if status == "SUCCEEDED" else None, "error": error,
        "created_at": _iso(at), "started_at": _iso(started) if done else None,
        "finished_at": _iso(finished) if done else None,
    }


def _attempt(number: int, at: datetime, status: str, error: str | None) -> dict[str, Any]:
    return {"number": number, "status": status, "worker_id": WORKER,
            "started_at": _iso(at + timedelta(seconds=number - 1)),
            "finished_at": _iso(at + timedelta(seconds=number - 0.5)), "error": error}


def _scheduled_job(spec: DemoSchedule, schedule_id: int, fire_time: datetime, outcome: str,
                   rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    error = None
    if outcome == "dead":
        error = str(spec.payload.get("message") or "settlement batch rejected by the acquirer: "
                    "HTTP 502 from partner-api.example.com")
    status = {"ok": "SUCCEEDED", "dead": "DEAD", "pending": "PENDING"}[outcome]
    tries = spec.max_attempts if outcome == "dead" else 1
    job = _job(spec.project, spec.handler, spec.payload, spec.queue, fire_time, status=status,
               attempts=tries, max_attempts=spec.max_attempts, trigger=Trigger.SCHEDULE,
               requested_by="system", error=error, rng=rng, schedule_id=schedule_id,
               fire_time=fire_time)
    if outcome == "pending":
        return job, []
    return job, [_attempt(n, fire_time, "FAILED" if error else "SUCCEEDED", error)
                 for n in range(1, tries + 1)]


def _add_delivery(day: _History, project: str, channel: tuple[int, str], after: str,
                  rng: random.Random) -> None:
    """A ``job.dead`` delivery to a channel nobody can reach: five failed attempts, DEAD."""
    channel_id, kind = channel
    jobs, attempts, deliveries = day.jobs, day.attempts, day.deliveries
    at = datetime.fromisoformat(after) + timedelta(seconds=1)
    webhook_id = f"msg_demo{rng.getrandbits(64):016x}"
    error = DELIVERY_ERROR[kind]
    jobs.append(_job(project, DELIVER_HANDLER,
                     {"channel_id": channel_id, "webhook_id": webhook_id, "type": "job.dead",
                      "timestamp": _iso(at), "data": {}},
                     DELIVERY_QUEUE, at, status="DEAD", attempts=DELIVERY_MAX_ATTEMPTS,
                     max_attempts=DELIVERY_MAX_ATTEMPTS, trigger=Trigger.NOTIFICATION,
                     requested_by="system", error=error, rng=rng))
    attempts.append([_attempt(n, at, "FAILED", error)
                     for n in range(1, DELIVERY_MAX_ATTEMPTS + 1)])
    deliveries.append([{"channel_id": channel_id, "webhook_id": webhook_id,
                        "event_type": "job.dead", "attempt": n, "status_code": None,
                        "error": error, "duration_ms": round(rng.uniform(2, 40), 3),
                        "at": _iso(at + timedelta(seconds=n * 2))}
                       for n in range(1, DELIVERY_MAX_ATTEMPTS + 1)])
