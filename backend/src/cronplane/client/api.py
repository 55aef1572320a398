"""A typed Python client for the cronplane API.

The shapes (``Job``, ``Schedule``, ``JobCreate`` …) are generated from the OpenAPI document into
``cronplane.client.models``; each method names the operation it calls (``@operation``), and a
test checks every method's body and return types against that operation in the document, so the
client cannot drift from the server silently. Standard library only.

    from cronplane.client.api import Cronplane

    cp = Cronplane("http://127.0.0.1:8080", token="cp_…")
    job = cp.submit_job({"handler": "noop", "payload": {}}, idempotency_key="nightly-2026-12-02")
    done = cp.wait_for_job(job["id"], timeout=60)
    print(done["status"])                      # "SUCCEEDED"
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

from cronplane.client.http import ApiClient, ApiError
from cronplane.client.models import (
    Backfill,
    BackfillResult,
    Batch,
    BatchCreate,
    BatchCreated,
    BatchJobsAdd,
    BatchJobsAdded,
    BatchList,
    BulkAction,
    BulkResult,
    FireLedger,
    Job,
    JobCreate,
    JobDetail,
    JobList,
    JobRerun,
    Project,
    ProjectList,
    Queue,
    QueueUpdate,
    Rollback,
    Schedule,
    ScheduleChain,
    ScheduleCreate,
    ScheduleList,
    SchedulePause,
    ScheduleUpdate,
    ScheduleVersion,
)
from cronplane.domain.states import FINISHED_JOB_STATUSES

__all__ = ["TERMINAL_STATUSES", "ApiError", "Cronplane", "JobNotFinished"]

TERMINAL_STATUSES = FINISHED_JOB_STATUSES  # a job in one of these never changes again

F = TypeVar("F", bound=Callable[..., Any])


def operation(method: str, path: str) -> Callable[[F], F]:
    """Marks a method as the client of one documented operation (checked by a test)."""

    def mark(func: F) -> F:
        func.__operation__ = (method, path)  # type: ignore[attr-defined]
        return func

    return mark


Item = TypeVar("Item")


def _follow(list_page: Callable[..., Any], filters: dict[str, Any]) -> Iterator[Item]:
    """Every item of a cursor-paginated list, one page at a time."""
    cursor: str | None = None
    while True:
        page = list_page(**filters, cursor=cursor)
        yield from page["items"]
        cursor = page["next_cursor"]
        if not cursor:
            return


class JobNotFinished(TimeoutError):
    """``wait_for_job`` gave up; ``job`` is the last state read."""

    def __init__(self, job: JobDetail, timeout: float) -> None:
        super().__init__(f"job #{job['id']} still {job['status']} after {timeout:g} s")
        self.job = job


class Cronplane:
    """One server, one API token. Errors raise ``ApiError`` (``status`` is the HTTP status, or
    ``None`` when the server could not be reached) with the server's problem detail as text."""

    def __init__(self, url: str, token: str, timeout: float = 30.0) -> None:
        self._http = ApiClient(url, token, timeout)

    @classmethod
    def over(cls, http: ApiClient) -> Cronplane:
        """The typed client on an HTTP client already made (the CLI's, from --url/--token)."""
        client = cls.__new__(cls)
        client._http = http
        return client

    # -- jobs ------------------------------------------------------------------------------------

    @operation("POST", "/jobs")
    def submit_job(self, job: JobCreate, *, idempotency_key: str | None = None) -> Job:
        """Enqueue an ad-hoc job; the same ``idempotency_key`` returns the same job."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return cast(Job, self._http.request("POST", "/jobs", job, headers=headers).body)

    @operation("GET", "/jobs")
    def list_jobs(self, **filters: Any) -> JobList:
        """One page of jobs, newest first (``status``, ``schedule_id``, ``queue``, ``q``,
        ``limit``, ``cursor`` … as the API documents)."""
        return cast(JobList, self._http.request("GET", "/jobs", query=filters).body)

    def iter_jobs(self, **filters: Any) -> Iterator[Job]:
        """Every job matching the filters, following the cursor."""
        return _follow(self.list_jobs, filters)

    @operation("GET", "/jobs/{job_id}")
    def get_job(self, job_id: int) -> JobDetail:
        """A job with its attempts."""
        return cast(JobDetail, self._http.request("GET", f"/jobs/{job_id}").body)

    # -- batches ---------------------------------------------------------------------------------

    @operation("POST", "/batches")
    def create_batch(self, batch: BatchCreate) -> BatchCreated:
        """Up to 1,000 jobs and an optional ``on_complete`` callback, all or nothing."""
        return cast(BatchCreated, self._http.request("POST", "/batches", batch).body)

    @operation("GET", "/batches/{batch_id}")
    def get_batch(self, batch_id: int) -> Batch:
        """Counts per status and ``state`` (running, succeeded, failed, cancelled)."""
        return cast(Batch, self._http.request("GET", f"/batches/{batch_id}").body)

    @operation("GET", "/batches")
    def list_batches(self, **filters: Any) -> BatchList:
        return cast(BatchList, self._http.request("GET", "/batches", query=filters).body)

    @operation("GET", "/batches/{batch_id}/jobs")
    def list_batch_jobs(self, batch_id: int, **filters: Any) -> JobList:
        return cast(JobList, self._http.request("GET", f"/batches/{batch_id}/jobs",
                                                query=filters).body)

    @operation("POST", "/batches/{batch_id}/jobs")
    def add_batch_jobs(self, batch_id: int, jobs: BatchJobsAdd) -> BatchJobsAdded:
        """From a running job of the batch: a client made with its ``CRONPLANE_JOB_TOKEN``."""
        return cast(BatchJobsAdded, self._http.request("POST", f"/batches/{batch_id}/jobs",
                                                       jobs).body)

    @operation("POST", "/jobs/{job_id}/cancel")
    def cancel_job(self, job_id: int) -> Job:
        return cast(Job, self._http.request("POST", f"/jobs/{job_id}/cancel").body)

    @operation("POST", "/jobs/{job_id}/retry")
    def retry_job(self, job_id: int) -> Job:
        return cast(Job, self._http.request("POST", f"/jobs/{job_id}/retry").body)

    @operation("POST", "/jobs/{job_id}/rerun")
    def rerun_job(self, job_id: int, changes: JobRerun) -> Job:
        """A new job copying this one, with ``changes`` (e.g. an edited payload) applied."""
        return cast(Job, self._http.request("POST", f"/jobs/{job_id}/rerun", changes).body)

    @operation("POST", "/jobs/bulk/cancel")
    def bulk_cancel(self, action: BulkAction) -> BulkResult:
        return cast(BulkResult, self._http.request("POST", "/jobs/bulk/cancel", action).body)

    @operation("POST", "/jobs/bulk/retry")
    def bulk_retry(self, action: BulkAction) -> BulkResult:
        return cast(BulkResult, self._http.request("POST", "/jobs/bulk/retry", action).body)

    def wait_for_job(self, job_id: int, timeout: float = 300.0, poll: float = 0.5) -> JobDetail:
        """Poll until the job is SUCCEEDED, DEAD or CANCELLED; ``JobNotFinished`` after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.get_job(job_id)
            if job["status"] in TERMINAL_STATUSES:
                return job
            if time.monotonic() >= deadline:
                raise JobNotFinished(job, timeout)
            time.sleep(poll)

    # -- schedules -------------------------------------------------------------------------------

    @operation("GET", "/schedules")
    def list_schedules(self, **filters: Any) -> ScheduleList:
        return cast(ScheduleList, self._http.request("GET", "/schedules", query=filters).body)

    def iter_schedules(self, **filters: Any) -> Iterator[Schedule]:
        return _follow(self.list_schedules, filters)

    @operation("GET", "/schedules/{schedule_id}")
    def get_schedule(self, schedule_id: int) -> Schedule:
        return cast(Schedule, self._http.request("GET", f"/schedules/{schedule_id}").body)

    @operation("POST", "/schedules")
    def create_schedule(self, schedule: ScheduleCreate) -> Schedule:
        return cast(Schedule, self._http.request("POST", "/schedules", schedule).body)

    @operation("PATCH", "/schedules/{schedule_id}")
    def update_schedule(self, schedule_id: int, changes: ScheduleUpdate, *,
                        version: int | None = None) -> Schedule:
        """With ``version`` (the one you read), a schedule changed since is refused with 412
        instead of overwritten."""
        headers = {"If-Match": f'"{version}"'} if version is not None else None
        return cast(Schedule, self._http.request("PATCH", f"/schedules/{schedule_id}", changes,
                                                 headers=headers).body)

    @operation("DELETE", "/schedules/{schedule_id}")
    def delete_schedule(self, schedule_id: int) -> None:
        self._http.request("DELETE", f"/schedules/{schedule_id}")

    @operation("POST", "/schedules/{schedule_id}/trigger")
    def trigger_schedule(self, schedule_id: int) -> Job:
        return cast(Job, self._http.request("POST", f"/schedules/{schedule_id}/trigger").body)

    @operation("POST", "/schedules/{schedule_id}/pause")
    def pause_schedule(self, schedule_id: int, pause: SchedulePause | None = None) -> Schedule:
        body = pause if pause is not None else {}
        return cast(Schedule, self._http.request("POST", f"/schedules/{schedule_id}/pause", body).body)

    @operation("POST", "/schedules/{schedule_id}/resume")
    def resume_schedule(self, schedule_id: int) -> Schedule:
        return cast(Schedule, self._http.request("POST", f"/schedules/{schedule_id}/resume").body)

    @operation("GET", "/schedules/{schedule_id}/fires")
    def schedule_fires(self, schedule_id: int, **window: Any) -> FireLedger:
        """The fire ledger: one explanation per fire time."""
        return cast(FireLedger, self._http.request("GET", f"/schedules/{schedule_id}/fires",
                                                   query=window).body)

    @operation("GET", "/schedules/{schedule_id}/chain")
    def schedule_chain(self, schedule_id: int) -> ScheduleChain:
        """The schedule's upstream and downstream schedules, each with its latest fire."""
        return cast(ScheduleChain, self._http.request("GET", f"/schedules/{schedule_id}/chain").body)

    @operation("GET", "/schedules/{schedule_id}/versions")
    def schedule_versions(self, schedule_id: int) -> list[ScheduleVersion]:
        """Every version of the schedule with its field changes and actor, newest first."""
        return cast(list[ScheduleVersion],
                    self._http.request("GET", f"/schedules/{schedule_id}/versions").body)

    @operation("POST", "/schedules/{schedule_id}/rollback")
    def rollback_schedule(self, schedule_id: int, rollback: Rollback) -> Schedule:
        return cast(Schedule, self._http.request("POST", f"/schedules/{schedule_id}/rollback",
                                                 rollback).body)

    @operation("POST", "/schedules/{schedule_id}/backfill")
    def backfill_schedule(self, schedule_id: int, backfill: Backfill) -> BackfillResult:
        """Enqueue (or with ``dry_run`` list) the fire times of a past window."""
        return cast(BackfillResult, self._http.request("POST", f"/schedules/{schedule_id}/backfill",
                                                       backfill).body)

    # -- projects --------------------------------------------------------------------------------

    @operation("GET", "/projects")
    def list_projects(self, **page: Any) -> ProjectList:
        """One page of your projects by slug (``limit``, ``cursor``)."""
        return cast(ProjectList, self._http.request("GET", "/projects", query=page).body)

    def iter_projects(self) -> Iterator[Project]:
        """Every project you are a member of, following the cursor."""
        return _follow(self.list_projects, {"limit": 200})

    # -- queues ----------------------------------------------------------------------------------

    @operation("GET", "/queues")
    def list_queues(self) -> list[Queue]:
        return cast(list[Queue], self._http.request("GET", "/queues").body)

    @operation("PATCH", "/queues/{project}/{name}")
    def update_queue(self, project: str, name: str, changes: QueueUpdate) -> Queue:
        return cast(Queue, self._http.request("PATCH", f"/queues/{project}/{name}", changes).body)
