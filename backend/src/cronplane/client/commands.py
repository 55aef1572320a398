"""``cronplane jobs …``, ``cronplane schedules …`` and ``cronplane usage``: the API from a shell
or a script.

Every command takes ``--url``/``CRONPLANE_URL``, ``--token``/``CRONPLANE_TOKEN`` and
``--output table|json`` (json: the API's own objects, one document on stdout), and exits as
``cronplane.cli_output`` says: 0 done, 1 the server refused (the reason on stderr), 2 usage,
3 the server could not be reached or failed. ``jobs submit --wait`` and ``jobs logs -f`` exit 0
only if the job SUCCEEDED (1 otherwise).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, cast

import click

from cronplane.cli_output import (
    EXIT_REFUSED,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    JSON,
    client_from,
    current_output,
    fail,
    remote,
    render_detail,
    render_table,
)
from cronplane.client.api import Cronplane, JobNotFinished
from cronplane.client.http import ApiClient
from cronplane.client.models import JobCreate
from cronplane.domain.states import FINISHED_JOB_STATUSES, AttemptStatus, JobStatus

__all__ = ["EXIT_REFUSED", "EXIT_UNAVAILABLE", "EXIT_USAGE", "client_from", "jobs", "remote",
           "schedules", "usage"]

FOLLOW_POLL = 0.5  # seconds between reads of a running attempt's output


JOB_COLUMNS = [
    ("id", lambda j: j["id"]),
    ("status", lambda j: j["status"]),
    ("handler", lambda j: j["handler"]),
    ("queue", lambda j: j.get("queue")),
    ("attempts", lambda j: f"{j['attempt_count']}/{j['max_attempts']}"),
    ("schedule", lambda j: j.get("schedule_id")),
    ("created_at", lambda j: j.get("created_at")),
]
SCHEDULE_COLUMNS = [
    ("id", lambda s: s["id"]),
    ("name", lambda s: s["name"]),
    ("cron", lambda s: s["cron"]),
    ("timezone", lambda s: s["timezone"]),
    ("state", lambda s: "paused" if s["paused"] else "active"),
    ("next_run_at", lambda s: s.get("next_run_at")),
]
_detail = render_detail


@click.group()
def jobs() -> None:
    """Jobs on a running server."""


@jobs.command("submit")
@click.argument("handler")
@click.option("--payload", default="{}", help="JSON object (or @file.json).")
@click.option("--priority", type=int, default=None)
@click.option("--max-attempts", type=int, default=None, help="Attempts before DEAD (server default 3).")
@click.option("--idempotency-key", default=None, help="Same key, same job (safe retries).")
@click.option("--after", "after", type=click.IntRange(min=1), multiple=True,
              help="Repeatable: a job ID this one waits for (depends_on); it is WAITING until "
                   "they finish.")
@click.option("--wait", is_flag=True, help="Wait until the job finishes; exit 0 only on SUCCEEDED.")
@click.option("--wait-timeout", type=float, default=300.0, show_default=True)
@remote
def jobs_submit(api: ApiClient, handler: str, *, payload: str, priority: int | None,
                max_attempts: int | None, idempotency_key: str | None, after: tuple[int, ...],
                wait: bool, wait_timeout: float) -> Any:
    """Submit an ad-hoc job."""
    text = open(payload[1:], encoding="utf-8").read() if payload.startswith("@") else payload  # noqa: SIM115
    try:
        body_payload = json.loads(text)
    except ValueError as exc:
        fail(f"--payload: not JSON: {exc}", EXIT_USAGE)
    body: dict[str, Any] = {"handler": handler, "payload": body_payload}
    if priority is not None:
        body["priority"] = priority
    if max_attempts is not None:
        body["max_attempts"] = max_attempts
    if after:
        body["depends_on"] = list(dict.fromkeys(after))
    client = Cronplane.over(api)
    job = client.submit_job(cast(JobCreate, body), idempotency_key=idempotency_key)
    if not wait:
        return job, f"submitted job #{job['id']} ({job['status']})"
    try:
        done = client.wait_for_job(job["id"], timeout=wait_timeout)
    except JobNotFinished as exc:
        fail(str(exc), EXIT_REFUSED)
    return (done, f"job #{done['id']} {done['status']}",
            0 if done["status"] == JobStatus.SUCCEEDED else EXIT_REFUSED)


@jobs.command("ls")
@click.option("--status", multiple=True, help="Repeatable: PENDING, RUNNING, SUCCEEDED, …")
@click.option("--schedule", "schedule_id", type=int, default=None)
@click.option("--limit", type=int, default=50, show_default=True)
@remote
def jobs_ls(api: ApiClient, *, status: tuple[str, ...], schedule_id: int | None, limit: int) -> Any:
    """List jobs, newest first."""
    query = {"limit": limit, "schedule_id": schedule_id, "status": [s.upper() for s in status]}
    items = api.request("GET", "/jobs", query=query).body["items"]
    return items, render_table(items, JOB_COLUMNS, empty="no jobs")


@jobs.command("show")
@click.argument("job_id", type=int)
@remote
def jobs_show(api: ApiClient, job_id: int) -> Any:
    """A job with its attempts."""
    job = api.request("GET", f"/jobs/{job_id}").body
    return job, _detail(job)


@jobs.command("logs")
@click.argument("job_id", type=int)
@click.option("--attempt", "number", type=int, default=None,
              help="This attempt (default: the latest; with -f, every attempt from it on).")
@click.option("--follow", "-f", is_flag=True,
              help="Keep printing until the job finishes; exit 0 only on SUCCEEDED.")
@remote
def jobs_logs(api: ApiClient, job_id: int, *, number: int | None, follow: bool) -> Any:
    """Print what a job's attempt wrote (stdout/stderr of shell.command, HTTP status and
    headers of http.request, anything a handler writes to ctx.output).

    With --output json: one JSON object per piece read, {job_id, attempt, offset, text} (one line
    each with -f, then {job_id, status}), for scripts."""
    job = api.request("GET", f"/jobs/{job_id}").body
    attempts = job["attempts"]
    current = number or (attempts[-1]["number"] if attempts else 1)
    if not follow:
        if not any(a["number"] == current for a in attempts):
            fail(f"job #{job_id} has no attempt {current} yet ({job['status']})", EXIT_REFUSED)
        _print_output(api, job_id, current, 0)
        return None
    while True:
        if any(a["number"] == current for a in job["attempts"]):
            if len(job["attempts"]) > 1 or current > 1:
                click.echo(f"--- attempt {current} ---", err=True)
            _follow_attempt(api, job_id, current)
            current += 1
        job = api.request("GET", f"/jobs/{job_id}").body
        if job["status"] in FINISHED_JOB_STATUSES and not any(a["number"] >= current
                                                 for a in job["attempts"]):
            break
        if not any(a["number"] == current for a in job["attempts"]):
            time.sleep(FOLLOW_POLL)  # waiting for the next attempt (a retry's back-off)
            job = api.request("GET", f"/jobs/{job_id}").body
    click.echo(f"job #{job_id} {job['status']}", err=True)
    if current_output() == JSON:
        click.echo(json.dumps({"job_id": job_id, "status": job["status"]}, sort_keys=True))
    sys.exit(0 if job["status"] == JobStatus.SUCCEEDED else EXIT_REFUSED)


def _print_output(api: ApiClient, job_id: int, number: int, offset: int) -> tuple[int, str]:
    """Print the attempt's output from ``offset``; returns (next offset, attempt status)."""
    data, headers = api.text(f"/jobs/{job_id}/attempts/{number}/output", {"offset": offset})
    start = int(headers.get("x-output-offset", offset))
    if start > offset:
        click.echo(f"[{start - offset} earlier bytes not kept]", err=True)
    if current_output() == JSON:
        if data or offset == 0:  # a follow's empty polls print nothing
            click.echo(json.dumps({"job_id": job_id, "attempt": number, "offset": start,
                                   "text": data.decode("utf-8", "replace")}, sort_keys=True))
    elif data:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    return int(headers.get("x-output-next-offset", start + len(data))), \
        headers.get("x-attempt-status", "")


def _follow_attempt(api: ApiClient, job_id: int, number: int) -> None:
    # The worker writes an attempt's last output before its outcome, so the read that first
    # sees it finished has everything.
    offset, status = _print_output(api, job_id, number, 0)
    while status == AttemptStatus.RUNNING:
        time.sleep(FOLLOW_POLL)  # a poll of the API, not a test wait
        offset, status = _print_output(api, job_id, number, offset)


@jobs.command("cancel")
@click.argument("job_id", type=int)
@remote
def jobs_cancel(api: ApiClient, job_id: int) -> Any:
    """Cancel a pending or running job."""
    job = api.request("POST", f"/jobs/{job_id}/cancel").body
    return job, f"job #{job['id']} {job['status']}" + (
        " (cancel requested)" if job.get("cancel_requested") and job["status"] == JobStatus.RUNNING else "")


@jobs.command("retry")
@click.argument("job_id", type=int)
@remote
def jobs_retry(api: ApiClient, job_id: int) -> Any:
    """Retry a DEAD or CANCELLED job."""
    job = api.request("POST", f"/jobs/{job_id}/retry").body
    return job, f"job #{job['id']} {job['status']}"


@click.group()
def schedules() -> None:
    """Schedules on a running server (see also `cronplane apply` and `export`)."""


@schedules.command("ls")
@remote
def schedules_ls(api: ApiClient) -> Any:
    """List live schedules."""
    items = api.get_all("/schedules")
    return items, render_table(items, SCHEDULE_COLUMNS, empty="no schedules")


@schedules.command("show")
@click.argument("schedule_id", type=int)
@remote
def schedules_show(api: ApiClient, schedule_id: int) -> Any:
    """One schedule."""
    schedule = api.request("GET", f"/schedules/{schedule_id}").body
    return schedule, _detail(schedule)


@schedules.command("trigger")
@click.argument("schedule_id", type=int)
@remote
def schedules_trigger(api: ApiClient, schedule_id: int) -> Any:
    """Run the schedule's definition now."""
    job = api.request("POST", f"/schedules/{schedule_id}/trigger").body
    return job, f"triggered: job #{job['id']} ({job['status']})"


@schedules.command("pause")
@click.argument("schedule_id", type=int)
@remote
def schedules_pause(api: ApiClient, schedule_id: int) -> Any:
    """Stop firing until resumed."""
    schedule = api.request("POST", f"/schedules/{schedule_id}/pause", {}).body
    return schedule, f"schedule #{schedule['id']} {schedule['name']} paused"


@schedules.command("resume")
@click.argument("schedule_id", type=int)
@remote
def schedules_resume(api: ApiClient, schedule_id: int) -> Any:
    """Fire again from the next fire time."""
    schedule = api.request("POST", f"/schedules/{schedule_id}/resume").body
    return schedule, f"schedule #{schedule['id']} {schedule['name']} resumed"


def _fire_text(fire: dict[str, Any] | None) -> str:
    if not fire or "outcome" not in fire:
        return "no fire yet"
    job = f" job #{fire['job_id']} {fire['job_status']}" if fire.get("job_id") else ""
    reason = f" — {fire['reason']}" if fire.get("reason") else ""
    return f"{fire['fire_time']} {fire['outcome']}{job}{reason}"


def _chain_lines(chain: dict[str, Any]) -> str:
    lines = [f"schedule #{chain['id']} {chain['name']}: {_fire_text(chain.get('last_fire'))}"]
    for side, arrow in (("upstream", "waits on"), ("downstream", "waited on by")):
        links = chain.get(side) or []
        if not links:
            lines.append(f"  {arrow}: none")
        for link in links:
            state = " (paused)" if link.get("paused") else " (deleted)" if link.get("deleted") else ""
            rule = ""
            if side == "upstream":
                rule = f" [{link.get('run_when') or 'succeeded'}"
                rule += f", wait {link['wait_seconds']} s]" if link.get("wait_seconds") else "]"
            lines.append(f"  {arrow} #{link['id']} {link['name']}{state}{rule}: "
                         f"{_fire_text(link.get('last_fire'))}")
    return "\n".join(lines)


@schedules.command("chain")
@click.argument("schedule_id", type=int)
@remote
def schedules_chain(api: ApiClient, schedule_id: int) -> Any:
    """The schedule's chain: its upstream and downstream schedules with their last fire."""
    chain = api.request("GET", f"/schedules/{schedule_id}/chain").body
    return chain, _chain_lines(chain)


@click.command("usage")
@click.option("--project", required=True, help="Project slug (you need its ADMIN role).")
@click.option("--from", "start", default=None,
              help="RFC 3339 start, e.g. 2026-12-01T00:00:00Z (default: 24 h / 30 days ago).")
@click.option("--to", "end", default=None, help="RFC 3339 end, exclusive (default: now).")
@click.option("--granularity", type=click.Choice(["hour", "day"]), default="hour",
              show_default=True)
@remote
def usage(api: ApiClient, *, project: str, start: str | None, end: str | None,
          granularity: str) -> Any:
    """A project's usage by hour or day: jobs created, attempts, attempt seconds, outcomes,
    deliveries (for chargeback; `--output json` for scripts)."""
    query = {"from": start, "to": end, "granularity": granularity}
    items = api.request("GET", f"/projects/{project}/usage", query=query).body["items"]
    columns = [("t", lambda i: i["t"]), *((name, lambda i, n=name: i[n]) for name in (
        "jobs_created", "attempts", "attempt_seconds", "succeeded", "dead", "deliveries"))]
    return {"items": items}, render_table(items, columns, empty="no usage in this window")
