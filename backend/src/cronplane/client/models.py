"""Typed shapes of the cronplane API, generated from the OpenAPI document by
``scripts/gen_client_models.py`` (``make openapi``). Do not edit by hand."""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "ActiveExperiment",
    "AlertStatus",
    "Alerts",
    "Attempt",
    "AuditEvent",
    "AuditGroup",
    "AuditList",
    "AuditVerify",
    "Backfill",
    "BackfillResult",
    "BackfillSkipped",
    "Batch",
    "BatchCreate",
    "BatchCreated",
    "BatchJob",
    "BatchJobsAdd",
    "BatchJobsAdded",
    "BatchList",
    "BulkAction",
    "BulkResult",
    "BulkSkipped",
    "Callback",
    "CancellableJobStatus",
    "ChainLink",
    "ChannelCreate",
    "ChannelCreated",
    "ChannelHealth",
    "ChannelList",
    "ChannelWithHealth",
    "ChaosCreate",
    "ChaosExperiment",
    "ChaosList",
    "CreatedToken",
    "CronDescribeRequest",
    "CronDescription",
    "Delivery",
    "DeliveryList",
    "Error",
    "FailedJobStatus",
    "FailingChannel",
    "FinishedAttemptStatus",
    "FinishedJobStatus",
    "FireEntry",
    "FireLedger",
    "FirstRun",
    "Handler",
    "HandlerRate",
    "Health",
    "HourThroughput",
    "Identity",
    "Job",
    "JobCount",
    "JobCreate",
    "JobDetail",
    "JobFilter",
    "JobLink",
    "JobList",
    "JobRerun",
    "JobStatusCounts",
    "Leader",
    "LeaderTerm",
    "Login",
    "LoginResponse",
    "LogoutUrl",
    "Me",
    "Member",
    "MemberList",
    "MemberSet",
    "PaginationMetadata",
    "PasswordChange",
    "PasswordReset",
    "Persona",
    "Project",
    "ProjectCreate",
    "ProjectList",
    "ProjectUpdate",
    "Provider",
    "ProviderIdentity",
    "Queue",
    "QueueHistory",
    "QueueHistoryList",
    "QueueSample",
    "QueueUpdate",
    "QueueWindows",
    "Quotas",
    "RetryableJobStatus",
    "Rollback",
    "Schedule",
    "ScheduleChain",
    "ScheduleCount",
    "ScheduleCreate",
    "ScheduleList",
    "SchedulePause",
    "ScheduleRate",
    "ScheduleRef",
    "ScheduleUpdate",
    "ScheduleVersion",
    "SecretNames",
    "Stats",
    "StatsWindows",
    "Throughput",
    "Token",
    "TokenCreate",
    "TokenList",
    "TokenScope",
    "UnsuccessfulJobStatus",
    "Upstream",
    "Usage",
    "UsageBucket",
    "UsageSeries",
    "User",
    "UserCreate",
    "UserList",
    "UserUpdate",
    "Window",
    "WindowCounts",
    "Worker",
]


class ActiveExperiment(TypedDict):
    expires_at: str
    id: int
    kind: str


class AlertStatus(TypedDict):
    since: str
    state: Literal["ok", "firing", "recovered"]


class Alerts(TypedDict):
    consecutive_failures: NotRequired[int | None]
    max_lateness_seconds: NotRequired[int | None]
    max_runtime_seconds: NotRequired[int | None]
    no_success_within_seconds: NotRequired[int | None]
    on_failure: NotRequired[bool]


class Attempt(TypedDict):
    error: str | None
    finished_at: str | None
    heartbeat_at: str | None
    lease_expires_at: str
    lost_reason: Literal["released_at_shutdown", "lease_expired"] | None
    number: int
    output_bytes: int
    started_at: str
    status: Literal["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "LOST", "CANCELLED", "INTERRUPTED"]
    worker_id: str


class AuditEvent(TypedDict):
    action: Literal["auth.login", "auth.login_failed", "auth.logout", "auth.refresh_reuse", "user.create", "user.update", "user.lock", "user.unlock", "user.disable", "user.enable", "user.password_change", "token.create", "token.delete", "token.revoke", "project.create", "project.update", "project.delete", "project.member_set", "project.member_remove", "schedule.create", "schedule.update", "schedule.pause", "schedule.resume", "schedule.delete", "schedule.trigger", "schedule.rollback", "schedule.backfill", "schedule.alert.ok", "schedule.alert.firing", "schedule.alert.recovered", "job.create", "job.cancel", "job.retry", "job.rerun", "job.bulk_cancel", "job.bulk_retry", "batch.create", "batch.add_jobs", "attempt.reclaim", "queue.pause", "queue.resume", "queue.update", "notification_channel.create", "notification_channel.delete", "notification_channel.test", "chaos.start", "chaos.stop", "chaos.expire", "leader.acquire", "leader.lose", "audit.redacted"]
    actor: str
    actor_role: NotRequired[str | None]
    at: str
    details: dict[str, Any]
    group: NotRequired[AuditGroup | dict[str, Any] | None]
    id: int
    ip: NotRequired[str | None]
    project: str | None
    request_id: NotRequired[str | None]
    target_deleted: NotRequired[bool | None]
    target_id: NotRequired[str | None]
    target_type: NotRequired[Literal["job", "schedule", "user", "project", "queue", "notification_channel", "chaos_experiment", "token", "session", "lease", "batch"] | None]


class AuditGroup(TypedDict):
    count: int
    first_at: str
    first_id: int
    href: Any
    last_at: str
    last_id: int


class AuditList(TypedDict):
    items: list[AuditEvent]
    next_cursor: str | None


class AuditVerify(TypedDict):
    anchor_id: int | None
    bad_checkpoints: int
    checked: int
    first_bad_id: int | None
    head_id: int | None
    ok: bool
    reasons: list[str]
    sealed_id: int | None
    truncated: bool
    unsealed: int


class Backfill(TypedDict):
    after: str
    before: str
    dry_run: NotRequired[bool]


class BackfillResult(TypedDict):
    already_present: int
    dry_run: bool
    enqueued: int
    fire_times: list[str]
    skipped: list[BackfillSkipped]


class BackfillSkipped(TypedDict):
    detail: NotRequired[str | None]
    fire_time: str
    reason: Literal["quota", "upstream"]


class Batch(TypedDict):
    callback_job_id: int | None
    cancelled: int
    created_at: str
    created_by: str | None
    dead: int
    finished_at: str | None
    id: int
    pending: int
    project: str
    running: int
    state: Literal["running", "succeeded", "failed", "cancelled"]
    succeeded: int
    total: int
    waiting: int


class BatchCreate(TypedDict):
    jobs: list[BatchJob]
    on_complete: NotRequired[Callback | dict[str, Any] | None]
    project: NotRequired[str | None]


class BatchCreated(TypedDict):
    callback_job_id: int | None
    id: int
    job_ids: list[int]


class BatchJob(TypedDict):
    concurrency_key: NotRequired[str | None]
    depends_on: NotRequired[list[int] | None]
    handler: str
    max_attempts: NotRequired[int | None]
    payload: NotRequired[dict[str, Any]]
    priority: NotRequired[int | None]
    queue: NotRequired[str | None]
    run_at: NotRequired[str | None]
    run_when: NotRequired[Literal["succeeded", "finished"] | None]
    timeout_seconds: NotRequired[int | None]


class BatchJobsAdd(TypedDict):
    jobs: list[BatchJob]


class BatchJobsAdded(TypedDict):
    job_ids: list[int]


class BatchList(TypedDict):
    items: list[Batch]
    next_cursor: str | None


class BulkAction(TypedDict):
    filter: NotRequired[JobFilter | dict[str, Any] | None]
    ids: NotRequired[list[int] | None]
    reason: str


class BulkResult(TypedDict):
    changed: int
    matched: int
    skipped: list[BulkSkipped]


class BulkSkipped(TypedDict):
    id: int
    reason: str


class Callback(TypedDict):
    handler: str
    payload: NotRequired[dict[str, Any]]
    run_when: NotRequired[Literal["succeeded", "finished"] | None]


CancellableJobStatus = Literal["PENDING", "RUNNING", "WAITING"]  # Waiting or in flight: POST /jobs/{id}/cancel applies


class ChainLink(TypedDict):
    deleted: bool
    id: int
    last_fire: FireEntry | dict[str, Any] | None
    name: str
    paused: bool
    run_when: Literal["succeeded", "finished"] | None
    wait_seconds: int | None


class ChannelCreate(TypedDict):
    address: NotRequired[str]
    events: NotRequired[list[Literal["job.dead", "job.succeeded", "schedule.failing", "schedule.late", "schedule.silent", "schedule.recovered"]]]
    kind: Literal["webhook", "slack", "email"]
    name: str
    project: NotRequired[str]
    secret: NotRequired[str]
    url: NotRequired[str]


class ChannelCreated(TypedDict):
    address: str | None
    created_at: str
    events: list[Literal["job.dead", "job.succeeded", "schedule.failing", "schedule.late", "schedule.silent", "schedule.recovered"]]
    has_secret: Any
    id: int
    kind: Literal["webhook", "slack", "email"]
    name: str
    project: str
    secret: str | None
    url: str | None


class ChannelHealth(TypedDict):
    failures_in_a_row: int
    last_error: NotRequired[str | None]
    last_failure_at: str | None
    last_success_at: str | None
    state: Literal["ok", "failing", "unused"]


class ChannelList(TypedDict):
    items: list[ChannelWithHealth]
    next_cursor: str | None


class ChannelWithHealth(TypedDict):
    address: NotRequired[str | None]
    created_at: str
    events: list[Literal["job.dead", "job.succeeded", "schedule.failing", "schedule.late", "schedule.silent", "schedule.recovered"]]
    has_secret: NotRequired[bool]
    health: ChannelHealth
    id: int
    kind: Literal["webhook", "slack", "email"]
    name: str
    project: str
    url: NotRequired[str | None]


class ChaosCreate(TypedDict):
    duration_seconds: int
    kind: Literal["leader_stepdown", "freeze_heartbeats", "fail_handler", "handler_latency", "kill_worker_thread"]
    params: NotRequired[dict[str, Any]]


class ChaosExperiment(TypedDict):
    created_by: str
    end_reason: NotRequired[str | None]
    ended_at: str | None
    expires_at: str
    id: int
    kind: Literal["leader_stepdown", "freeze_heartbeats", "fail_handler", "handler_latency", "kill_worker_thread"]
    params: dict[str, Any]
    started_at: str


class ChaosList(TypedDict):
    items: list[ChaosExperiment]
    next_cursor: str | None


class CreatedToken(TypedDict):
    created_at: str
    expires_at: str | None
    id: int
    last_used_at: str | None
    name: str
    prefix: str
    project: str | None
    role: Literal["VIEWER", "OPERATOR", "ADMIN"]
    token: str


class CronDescribeRequest(TypedDict):
    after: NotRequired[str | None]
    count: NotRequired[int]
    expression: str
    timezone: str


class CronDescription(TypedDict):
    description: str
    expression: str
    next_runs: list[str]


class Delivery(TypedDict):
    at: str
    attempt: int
    duration_ms: float | None
    error: str | None
    event_type: str
    id: int
    job_id: int | None
    status_code: int | None
    webhook_id: str


class DeliveryList(TypedDict):
    items: list[Delivery]
    next_cursor: str | None


class Error(TypedDict):
    detail: str
    errors: NotRequired[dict[str, Any]]
    status: int
    title: str
    type: str


FailedJobStatus = Literal["DEAD"]  # A run that counts as a failure of its schedule (health, alerts)


class FailingChannel(TypedDict):
    failures_in_a_row: int
    id: int
    kind: str
    last_success_at: str | None
    name: str
    project: str


FinishedAttemptStatus = Literal["SUCCEEDED", "FAILED", "TIMED_OUT", "LOST", "CANCELLED", "INTERRUPTED"]  # An attempt in one of these is over


FinishedJobStatus = Literal["SUCCEEDED", "DEAD", "CANCELLED"]  # A job in one of these never changes again


class FireEntry(TypedDict):
    fire_time: str
    job_id: int | None
    job_status: str | None
    lag_ms: int | None
    outcome: Literal["enqueued", "waiting_upstream", "skipped_upstream", "skipped_paused", "skipped_overlap", "skipped_misfire", "skipped_quota", "deleted", "pending", "missing"]
    reason: str | None


class FireLedger(TypedDict):
    items: list[FireEntry]


class FirstRun(TypedDict):
    initial_password_file: str | None
    username: str | None


class Handler(TypedDict):
    default_timeout_seconds: int | None
    description: str
    name: str
    payload_schema: dict[str, Any]
    scope: Literal["project", "instance"]


class HandlerRate(TypedDict):
    day: WindowCounts
    handler: str


class Health(TypedDict):
    alerts: dict[str, AlertStatus]
    consecutive_failures: int
    last_success_at: str | None
    since: str
    state: Literal["ok", "late", "failing", "paused", "silent"]


class HourThroughput(TypedDict):
    dead: int
    deliveries_dead: int
    deliveries_succeeded: int
    hour: str
    succeeded: int


class Identity(TypedDict):
    id: int
    is_persona: NotRequired[bool]
    role: Literal["VIEWER", "OPERATOR", "ADMIN"]
    username: str


class Job(TypedDict):
    attempt_count: int
    batch_id: NotRequired[int | None]
    cancel_requested: bool
    concurrency_key: str | None
    created_at: str
    error: str | None
    finished_at: str | None
    fire_time: NotRequired[str | None]
    handler: str
    id: int
    idempotency_key: str | None
    max_attempts: int
    payload: dict[str, Any]
    priority: int
    project: str
    queue: str
    requested_by: str | None
    rerun_of: int | None
    result: Any
    run_at: str
    run_when: NotRequired[Literal["succeeded", "finished"] | None]
    schedule_deleted: NotRequired[bool | None]
    schedule_id: int | None
    schedule_name: NotRequired[str | None]
    schedule_version: int | None
    started_at: str | None
    status: Literal["PENDING", "RUNNING", "SUCCEEDED", "DEAD", "CANCELLED", "WAITING"]
    timeout_seconds: int | None
    trace_id: NotRequired[str | None]
    trace_url: NotRequired[str | None]
    trigger: Literal["schedule", "manual", "api", "retry", "rerun", "backfill", "notification"]


class JobCount(TypedDict):
    count: int
    limit: int


class JobCreate(TypedDict):
    concurrency_key: NotRequired[str | None]
    depends_on: NotRequired[list[int] | None]
    handler: str
    max_attempts: NotRequired[int | None]
    payload: NotRequired[dict[str, Any]]
    priority: NotRequired[int | None]
    project: NotRequired[str | None]
    queue: NotRequired[str | None]
    run_at: NotRequired[str | None]
    run_when: NotRequired[Literal["succeeded", "finished"] | None]
    timeout_seconds: NotRequired[int | None]


class JobDetail(TypedDict):
    attempt_count: int
    attempts: list[Attempt]
    batch_id: NotRequired[int | None]
    cancel_requested: bool
    concurrency_key: str | None
    created_at: str
    dependents: list[JobLink]
    depends_on: list[JobLink]
    error: str | None
    finished_at: str | None
    fire_time: NotRequired[str | None]
    handler: str
    id: int
    idempotency_key: str | None
    max_attempts: int
    payload: dict[str, Any]
    priority: int
    project: str
    queue: str
    requested_by: str | None
    rerun_of: int | None
    result: Any
    run_at: str
    run_when: NotRequired[Literal["succeeded", "finished"] | None]
    schedule_deleted: NotRequired[bool | None]
    schedule_id: int | None
    schedule_name: NotRequired[str | None]
    schedule_version: int | None
    started_at: str | None
    status: Literal["PENDING", "RUNNING", "SUCCEEDED", "DEAD", "CANCELLED", "WAITING"]
    timeout_seconds: int | None
    trace_id: NotRequired[str | None]
    trace_url: NotRequired[str | None]
    trigger: Literal["schedule", "manual", "api", "retry", "rerun", "backfill", "notification"]


class JobFilter(TypedDict):
    created_after: NotRequired[str | None]
    created_before: NotRequired[str | None]
    exclude_trigger: NotRequired[list[Literal["schedule", "manual", "api", "retry", "rerun", "backfill", "notification"]]]
    handler: NotRequired[str | None]
    project: NotRequired[list[str]]
    q: NotRequired[str | None]
    queue: NotRequired[str | None]
    schedule_id: NotRequired[int | None]
    status: NotRequired[list[Literal["PENDING", "RUNNING", "SUCCEEDED", "DEAD", "CANCELLED", "WAITING"]]]


class JobLink(TypedDict):
    fire_time: NotRequired[str | None]
    handler: str
    id: int
    schedule_id: NotRequired[int | None]
    schedule_name: NotRequired[str | None]
    status: Literal["PENDING", "RUNNING", "SUCCEEDED", "DEAD", "CANCELLED", "WAITING"]


class JobList(TypedDict):
    items: list[Job]
    next_cursor: str | None


class JobRerun(TypedDict):
    payload: NotRequired[dict[str, Any] | None]
    priority: NotRequired[int | None]
    queue: NotRequired[str | None]


class JobStatusCounts(TypedDict):
    counts: dict[str, int]


class Leader(TypedDict):
    expires_at: str
    fencing_token: int
    owner: str


class LeaderTerm(TypedDict):
    end_reason: str | None
    ended_at: str | None
    fencing_token: int
    owner: str
    started_at: str


class Login(TypedDict):
    password: str
    username: str


class LoginResponse(TypedDict):
    access_token: NotRequired[str]
    expires_in: int
    refresh_token: NotRequired[str]
    token_type: str
    user: Identity


class LogoutUrl(TypedDict):
    url: str | None


class Me(TypedDict):
    can_change_password: bool
    id: int
    identity: ProviderIdentity | dict[str, Any] | None
    is_persona: NotRequired[bool]
    role: Literal["VIEWER", "OPERATOR", "ADMIN"] | None
    scope: TokenScope | dict[str, Any] | None
    username: str


class Member(TypedDict):
    project: str
    role: Literal["VIEWER", "OPERATOR", "ADMIN"]
    user_id: int
    username: str


class MemberList(TypedDict):
    items: list[Member]
    next_cursor: str | None


class MemberSet(TypedDict):
    role: Literal["VIEWER", "OPERATOR", "ADMIN"]


class PaginationMetadata(TypedDict):
    first_page: NotRequired[int]
    last_page: NotRequired[int]
    next_page: NotRequired[int]
    page: NotRequired[int]
    previous_page: NotRequired[int]
    total: NotRequired[int]
    total_pages: NotRequired[int]


class PasswordChange(TypedDict):
    current_password: str
    new_password: str


class PasswordReset(TypedDict):
    password: str


class Persona(TypedDict):
    label: str
    name: str
    role: Literal["VIEWER", "OPERATOR", "ADMIN"]


class Project(TypedDict):
    archived: bool
    name: str
    quotas: Quotas
    role: Literal["VIEWER", "OPERATOR", "ADMIN"]
    slug: str
    usage: Usage


class ProjectCreate(TypedDict):
    name: str
    quotas: NotRequired[Quotas]
    slug: str


class ProjectList(TypedDict):
    items: list[Project]
    next_cursor: str | None


class ProjectUpdate(TypedDict):
    archived: NotRequired[bool]
    name: NotRequired[str]
    quotas: NotRequired[Quotas]


class Provider(TypedDict):
    login_url: str
    name: str


class ProviderIdentity(TypedDict):
    groups: NotRequired[list[str]]
    issuer: str
    role_source: NotRequired[dict[str, Any]]
    subject: str


class Queue(TypedDict):
    concurrency_limit: int | None
    name: str
    oldest_due_at: str | None
    paused: bool
    paused_at: str | None
    paused_by: str | None
    paused_reason: str | None
    pending: int
    per_key_limit: int | None
    project: str
    rate_limit_per_second: float | None
    running: int


class QueueHistory(TypedDict):
    name: str
    project: str
    samples: list[QueueSample]


class QueueHistoryList(TypedDict):
    items: list[QueueHistory]
    next_cursor: str | None


class QueueSample(TypedDict):
    at: str
    completed: int
    latency_seconds: float
    ready: int
    running: int


class QueueUpdate(TypedDict):
    concurrency_limit: NotRequired[int | None]
    paused: NotRequired[bool]
    paused_reason: NotRequired[str | None]
    per_key_limit: NotRequired[int | None]
    rate_limit_per_second: NotRequired[float | None]


class QueueWindows(TypedDict):
    day: WindowCounts
    hour: WindowCounts
    project: str
    queue: str


class Quotas(TypedDict):
    enqueue_per_minute: NotRequired[int | None]
    max_pending_jobs: NotRequired[int | None]
    max_schedules: NotRequired[int | None]


RetryableJobStatus = Literal["DEAD", "CANCELLED"]  # POST /jobs/{id}/retry applies


class Rollback(TypedDict):
    version: int


class Schedule(TypedDict):
    alerts: Alerts
    created_at: str
    cron: str
    deleted_at: str | None
    description: str
    downstream: list[ScheduleRef]
    handler: str
    health: Any
    id: int
    last_error: str | None
    last_run_at: str | None
    max_attempts: int
    misfire: Literal["skip", "fire_once"]
    missed_count: NotRequired[int]
    name: str
    next_run_at: str | None
    notify: list[str]
    overlap: Literal["forbid", "allow"]
    overlap_skipped_count: NotRequired[int]
    pause_reason: str | None
    paused: bool
    paused_until: str | None
    payload: dict[str, Any]
    priority: int
    project: str
    queue: str
    timeout_seconds: int | None
    timezone: str
    updated_at: str
    upstream: list[Upstream]
    version: int


class ScheduleChain(TypedDict):
    downstream: list[ChainLink]
    id: int
    last_fire: dict[str, Any] | FireEntry | None
    name: str
    upstream: list[ChainLink]


class ScheduleCount(TypedDict):
    count: int
    limit: int


class ScheduleCreate(TypedDict):
    alerts: NotRequired[Any]
    cron: str
    description: NotRequired[str]
    handler: str
    max_attempts: NotRequired[int]
    misfire: NotRequired[Literal["skip", "fire_once"]]
    name: str
    notify: NotRequired[list[str]]
    overlap: NotRequired[Literal["forbid", "allow"]]
    paused: NotRequired[bool]
    payload: NotRequired[dict[str, Any]]
    priority: NotRequired[int]
    project: NotRequired[str]
    queue: NotRequired[str]
    timeout_seconds: NotRequired[int | None]
    timezone: NotRequired[str]
    upstream: NotRequired[list[Upstream]]


class ScheduleList(TypedDict):
    items: list[Schedule]
    next_cursor: str | None


class SchedulePause(TypedDict):
    reason: NotRequired[str | None]
    until: NotRequired[str | None]


class ScheduleRate(TypedDict):
    day: WindowCounts
    handler: str
    name: str | None
    project: str
    schedule_id: int


class ScheduleRef(TypedDict):
    id: int
    name: str


class ScheduleUpdate(TypedDict):
    alerts: NotRequired[Any]
    cron: NotRequired[str]
    description: NotRequired[str]
    handler: NotRequired[str]
    max_attempts: NotRequired[int]
    misfire: NotRequired[Literal["skip", "fire_once"]]
    name: NotRequired[str]
    notify: NotRequired[list[str]]
    overlap: NotRequired[Literal["forbid", "allow"]]
    paused: NotRequired[bool]
    payload: NotRequired[dict[str, Any]]
    priority: NotRequired[int]
    queue: NotRequired[str]
    timeout_seconds: NotRequired[int | None]
    timezone: NotRequired[str]
    upstream: NotRequired[list[Upstream]]


class ScheduleVersion(TypedDict):
    actor: str
    at: str
    changes: dict[str, list[Any]]
    definition: dict[str, Any]
    version: int


class SecretNames(TypedDict):
    names: list[str]


class Stats(TypedDict):
    chaos: list[ActiveExperiment]
    deliveries_by_status: dict[str, int]
    failing_channels: list[FailingChannel]
    jobs_by_status: dict[str, int]
    leader: dict[str, Any] | Leader | None
    throughput: list[Throughput]
    workers: list[Worker]


class StatsWindows(TypedDict):
    by_handler: list[HandlerRate]
    by_schedule: list[ScheduleRate]
    day: Window
    hour: Window
    leader_terms: list[LeaderTerm]
    now: str
    queues: list[QueueWindows]
    throughput: list[HourThroughput]


class Throughput(TypedDict):
    failed: int
    minute: str
    succeeded: int


class Token(TypedDict):
    created_at: str
    expires_at: str | None
    id: int
    last_used_at: str | None
    name: str
    prefix: str
    project: str | None
    role: Literal["VIEWER", "OPERATOR", "ADMIN"]


class TokenCreate(TypedDict):
    expires_at: NotRequired[str | None]
    name: str
    project: NotRequired[str | None]
    role: NotRequired[Literal["VIEWER", "OPERATOR", "ADMIN"] | None]


class TokenList(TypedDict):
    items: list[Token]
    next_cursor: str | None


class TokenScope(TypedDict):
    project: str
    role: Literal["VIEWER", "OPERATOR", "ADMIN"]


UnsuccessfulJobStatus = Literal["DEAD", "CANCELLED"]  # Finished without succeeding


class Upstream(TypedDict):
    run_when: NotRequired[Literal["succeeded", "finished"]]
    schedule: int
    wait_seconds: NotRequired[int | None]


class Usage(TypedDict):
    enqueued_last_minute: int
    pending_jobs: int
    schedules: int


class UsageBucket(TypedDict):
    attempt_seconds: float
    attempts: int
    dead: int
    deliveries: int
    jobs_created: int
    succeeded: int
    t: str


class UsageSeries(TypedDict):
    items: list[UsageBucket]


class User(TypedDict):
    created_at: str
    disabled: bool
    id: int
    is_persona: bool
    last_login_at: str | None
    locked: bool
    role: Literal["VIEWER", "OPERATOR", "ADMIN"]
    updated_at: str
    username: str


class UserCreate(TypedDict):
    password: str
    projects: NotRequired[dict[str, Literal["VIEWER", "OPERATOR", "ADMIN"]] | None]
    role: Literal["VIEWER", "OPERATOR", "ADMIN"]
    username: str


class UserList(TypedDict):
    items: list[User]
    next_cursor: str | None


class UserUpdate(TypedDict):
    role: NotRequired[Literal["VIEWER", "OPERATOR", "ADMIN"]]


class Window(TypedDict):
    deliveries: WindowCounts
    jobs: Any
    since: str


class WindowCounts(TypedDict):
    cancelled: int
    claim_lag_max_seconds: float | None
    claim_lag_mean_seconds: float | None
    claimed: int
    dead: int
    failure_rate: float | None
    succeeded: int


class Worker(TypedDict):
    heartbeat_at: str
    host: str
    id: str
    pid: int
    running: int
