"""``cronplane jobs …`` and ``cronplane schedules …``: the API from a shell or a script.

Every command takes ``--url``/``CRONPLANE_URL`` and ``--token``/``CRONPLANE_TOKEN`` and
``--output text|json`` (json: the API's own objects, one document on stdout). Exit codes scripts
can rely on: 0 done, 1 the server refused (the reason on stderr), 2 bad usage or configuration,
5 the server could not be reached. ``jobs submit --wait`` and ``jobs logs -f`` exit 0 only if
the job SUCCEEDED.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any, NoReturn, cast

import click

from cronplane.client.api import Cronplane, JobNotFinished
from cronplane.client.http import ApiClient, ApiError
from cronplane.client.models import JobCreate
from cronplane.domain.states import FINISHED_JOB_STATUSES, AttemptStatus, JobStatus

EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 5
FOLLOW_POLL = 0.5  # seconds between reads of a running attempt's output


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"cronplane: {message}", err=True)
    sys.exit(code)


def client_from(url: str | None, token: str | None) -> ApiClient:
    if not url:
        _fail("--url or CRONPLANE_URL is required (e.g. http://127.0.0.1:8080)", EXIT_USAGE)
    if not token:
        _fail("--token or CRONPLANE_TOKEN is required (an API token, console → API tokens)",
              EXIT_USAGE)
    return ApiClient(url, token)


def remote(func: Callable[..., Any]) -> Callable[..., Any]:
    """Adds --url, --token and --output, and turns API errors into one line and an exit code."""

    @click.option("--url", envvar="CRONPLANE_URL", help="Server URL (CRONPLANE_URL).")
    @click.option("--token", envvar="CRONPLANE_TOKEN", help="API token (CRONPLANE_TOKEN).")
    # "text" is the name of version 2 for "table", still accepted.
    @click.option("--output", "-o", type=click.Choice(["table", "json", "text"]),
                  default="table", show_default=True)
    @click.pass_context
    def wrapper(ctx: click.Context, /, url: str | None, token: str | None, output: str,
                **kwargs: Any) -> None:
        api = client_from(url, token)
        try:
            result = ctx.invoke(func, api, **kwargs)
        except ApiError as exc:
            _fail(str(exc), EXIT_UNREACHABLE if exc.status is None else EXIT_REFUSED)
        if result is None:
            return
        value, text, *code = result
        click.echo(json.dumps(value, indent=2, sort_keys=True) if output == "json" else text)
        if code and code[0]:
            sys.exit(code[0])

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


def _job_line(job: dict[str, Any]) -> str:
    schedule = f" schedule {job['schedule_id']}" if job.get("schedule_id") else ""
    return (f"#{job['id']:<8} {job['status']:<10} {job['handler']:<28} "
            f"attempts {job['attempt_count']}/{job['max_attempts']}{schedule}")


def _schedule_line(s: dict[str, Any]) -> str:
    state = "paused" if s["paused"] else "active"
    return f"#{s['id']:<6} {s['name']:<32} {s['cron']:<20} {s['timezone']:<16} {state}"


def _detail(obj: dict[str, Any]) -> str:
    return "\n".join(f"{key}: {json.dumps(value) if isinstance(value, dict | list) else value}"
                     for key, value in obj.items())


@click.group()
def jobs() -> None:
    """Jobs on a running server."""


@jobs.command("submit")
@click.argument("handler")
@click.option("--payload", default="{}", help="JSON object (or @file.json).")
@click.option("--priority", type=int, default=None)
@click.option("--max-attempts", type=int, default=None, help="Attempts before DEAD (server default 3).")
@click.option("--idempotency-key", default=None, help="Same key, same job (safe retries).")
@click.option("--wait", is_flag=True, help="Wait until the job finishes; exit 0 only on SUCCEEDED.")
@click.option("--wait-timeout", type=float, default=300.0, show_default=True)
@remote
def jobs_submit(api: ApiClient, handler: str, *, payload: str, priority: int | None,
                max_attempts: int | None, idempotency_key: str | None, wait: bool,
                wait_timeout: float) -> Any:
    """Submit an ad-hoc job."""
    text = open(payload[1:], encoding="utf-8").read() if payload.startswith("@") else payload  # noqa: SIM115
    try:
        body_payload = json.loads(text)
    except ValueError as exc:
        _fail(f"--payload: not JSON: {exc}", EXIT_USAGE)
    body: dict[str, Any] = {"handler": handler, "payload": body_payload}
    if priority is not None:
        body["priority"] = priority
    if max_attempts is not None:
        body["max_attempts"] = max_attempts
    client = Cronplane.over(api)
    job = client.submit_job(cast(JobCreate, body), idempotency_key=idempotency_key)
    if not wait:
        return job, f"submitted job #{job['id']} ({job['status']})"
    try:
        done = client.wait_for_job(job["id"], timeout=wait_timeout)
    except JobNotFinished as exc:
        _fail(str(exc), EXIT_REFUSED)
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
    return items, "\n".join(_job_line(j) for j in items) or "no jobs"


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
    headers of http.request, anything a handler writes to ctx.output)."""
    job = api.request("GET", f"/jobs/{job_id}").body
    attempts = job["attempts"]
    current = number or (attempts[-1]["number"] if attempts else 1)
    if not follow:
        if not any(a["number"] == current for a in attempts):
            _fail(f"job #{job_id} has no attempt {current} yet ({job['status']})", EXIT_REFUSED)
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
    sys.exit(0 if job["status"] == JobStatus.SUCCEEDED else EXIT_REFUSED)


def _print_output(api: ApiClient, job_id: int, number: int, offset: int) -> tuple[int, str]:
    """Print the attempt's output from ``offset``; returns (next offset, attempt status)."""
    data, headers = api.text(f"/jobs/{job_id}/attempts/{number}/output", {"offset": offset})
    start = int(headers.get("x-output-offset", offset))
    if start > offset:
        click.echo(f"[{start - offset} earlier bytes not kept]", err=True)
    if data:
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
    return items, "\n".join(_schedule_line(s) for s in items) or "no schedules"


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
    header = (f"{'t':<21} {'jobs_created':>12} {'attempts':>9} {'attempt_seconds':>16} "
              f"{'succeeded':>10} {'dead':>6} {'deliveries':>10}")
    lines = [f"{i['t']:<21} {i['jobs_created']:>12} {i['attempts']:>9} "
             f"{i['attempt_seconds']:>16.3f} {i['succeeded']:>10} {i['dead']:>6} "
             f"{i['deliveries']:>10}" for i in items]
    return {"items": items}, "\n".join([header, *lines])
