// Generated from openapi.json by scripts/gen-rules.mjs (`npm run gen:api`): do not edit.
// The server's rules as values: status sets, and each request field's constraints and default.
import type { components } from './schema';

type Schemas = components['schemas'];

/** Waiting or in flight: POST /jobs/{id}/cancel applies */
export const CancellableJobStatus: readonly Schemas['CancellableJobStatus'][] = ["PENDING","RUNNING","WAITING"];

/** A run that counts as a failure of its schedule (health, alerts) */
export const FailedJobStatus: readonly Schemas['FailedJobStatus'][] = ["DEAD"];

/** An attempt in one of these is over */
export const FinishedAttemptStatus: readonly Schemas['FinishedAttemptStatus'][] = ["SUCCEEDED","FAILED","TIMED_OUT","LOST","CANCELLED","INTERRUPTED"];

/** A job in one of these never changes again */
export const FinishedJobStatus: readonly Schemas['FinishedJobStatus'][] = ["SUCCEEDED","DEAD","CANCELLED"];

/** POST /jobs/{id}/retry applies */
export const RetryableJobStatus: readonly Schemas['RetryableJobStatus'][] = ["DEAD","CANCELLED"];

/** Finished without succeeding */
export const UnsuccessfulJobStatus: readonly Schemas['UnsuccessfulJobStatus'][] = ["DEAD","CANCELLED"];

export const AlertsRules = {
  consecutive_failures: {"minimum":2,"maximum":50,"default":null},
  max_lateness_seconds: {"minimum":1,"maximum":31622400,"default":null},
  max_runtime_seconds: {"minimum":1,"maximum":31622400,"default":null},
  no_success_within_seconds: {"minimum":1,"maximum":31622400,"default":null},
  on_failure: {"default":false},
} as const;

export const BackfillRules = {
  dry_run: {"default":false},
} as const;

export const BatchCreateRules = {
  jobs: {"maxItems":1000},
  on_complete: {"default":null},
  project: {"pattern":"^[a-z0-9-]{1,40}$","maxLength":40,"default":null},
} as const;

export const BatchJobRules = {
  concurrency_key: {"minLength":1,"maxLength":255,"default":null},
  depends_on: {"maxItems":100,"default":null,"items":{"minimum":1,"maximum":9223372036854776000}},
  handler: {"minLength":1,"maxLength":200},
  max_attempts: {"minimum":1,"maximum":100,"default":null},
  priority: {"minimum":-100,"maximum":100,"default":null},
  queue: {"pattern":"^[a-z0-9_.-]{1,64}$","maxLength":64,"default":null},
  run_at: {"default":null},
  run_when: {"default":null},
  timeout_seconds: {"minimum":1,"maximum":86400,"default":null},
} as const;

export const BatchJobsAddRules = {
  jobs: {"maxItems":1000},
} as const;

export const BulkActionRules = {
  filter: {"default":null},
  ids: {"maxItems":10000,"default":null,"items":{"minimum":1,"maximum":9223372036854776000}},
  reason: {"minLength":1,"maxLength":1000},
} as const;

export const CallbackRules = {
  handler: {"minLength":1,"maxLength":200},
  run_when: {"default":null},
} as const;

export const ChannelCreateRules = {
  address: {"maxLength":320},
  name: {"pattern":"^[a-z0-9_.-]{1,64}$","maxLength":64},
  project: {"pattern":"^[a-z0-9-]{1,40}$","maxLength":40},
  secret: {"maxLength":200},
  url: {"maxLength":2048},
} as const;

export const ChaosCreateRules = {
  duration_seconds: {"minimum":1,"maximum":600},
} as const;

export const CronDescribeRequestRules = {
  after: {"default":null},
  count: {"minimum":1,"maximum":50,"default":5},
  expression: {"minLength":1,"maxLength":200},
  timezone: {"minLength":1,"maxLength":64},
} as const;

export const JobCreateRules = {
  concurrency_key: {"minLength":1,"maxLength":255,"default":null},
  depends_on: {"maxItems":100,"default":null,"items":{"minimum":1,"maximum":9223372036854776000}},
  handler: {"minLength":1,"maxLength":200},
  max_attempts: {"minimum":1,"maximum":100,"default":null},
  priority: {"minimum":-100,"maximum":100,"default":null},
  project: {"pattern":"^[a-z0-9-]{1,40}$","maxLength":40,"default":null},
  queue: {"pattern":"^[a-z0-9_.-]{1,64}$","maxLength":64,"default":null},
  run_at: {"default":null},
  run_when: {"default":null},
  timeout_seconds: {"minimum":1,"maximum":86400,"default":null},
} as const;

export const JobFilterRules = {
  created_after: {"default":null},
  created_before: {"default":null},
  handler: {"maxLength":200,"default":null},
  project: {"items":{"minLength":1,"maxLength":40}},
  q: {"maxLength":200,"default":null},
  queue: {"pattern":"^[a-z0-9_.-]{1,64}$","maxLength":64,"default":null},
  schedule_id: {"minimum":1,"maximum":9223372036854776000,"default":null},
} as const;

export const JobRerunRules = {
  payload: {"default":null},
  priority: {"minimum":-100,"maximum":100,"default":null},
  queue: {"pattern":"^[a-z0-9_.-]{1,64}$","maxLength":64,"default":null},
} as const;

export const LoginRules = {
  password: {"minLength":1,"maxLength":1024},
  username: {"minLength":1,"maxLength":256},
} as const;

export const PasswordChangeRules = {
  current_password: {"minLength":1,"maxLength":1024},
  new_password: {"minLength":8,"maxLength":1024},
} as const;

export const PasswordResetRules = {
  password: {"minLength":8,"maxLength":1024},
} as const;

export const ProjectCreateRules = {
  name: {"minLength":1,"maxLength":200},
  slug: {"pattern":"^[a-z0-9-]{1,40}$","maxLength":40},
} as const;

export const ProjectUpdateRules = {
  name: {"minLength":1,"maxLength":200},
} as const;

export const QueueUpdateRules = {
  concurrency_limit: {"minimum":1,"maximum":1000000},
  paused_reason: {"maxLength":1000},
  per_key_limit: {"minimum":1,"maximum":1000000},
  rate_limit_per_second: {"minimum":0,"maximum":1000000},
} as const;

export const QuotasRules = {
  enqueue_per_minute: {"minimum":0,"maximum":10000000},
  max_pending_jobs: {"minimum":0,"maximum":10000000},
  max_schedules: {"minimum":0,"maximum":10000000},
} as const;

export const RollbackRules = {
  version: {"minimum":1,"maximum":2147483647},
} as const;

export const ScheduleCreateRules = {
  alerts: {"default":{"consecutive_failures":null,"max_lateness_seconds":null,"max_runtime_seconds":null,"no_success_within_seconds":null,"on_failure":false}},
  cron: {"minLength":1,"maxLength":200},
  description: {"maxLength":2000,"default":""},
  handler: {"minLength":1,"maxLength":200},
  max_attempts: {"minimum":1,"maximum":100,"default":3},
  misfire: {"default":"skip"},
  name: {"minLength":1,"maxLength":200},
  notify: {"maxItems":20,"default":[],"items":{"pattern":"^[a-z0-9_.-]{1,64}$","maxLength":64}},
  overlap: {"default":"forbid"},
  paused: {"default":false},
  payload: {"default":{}},
  priority: {"minimum":-100,"maximum":100,"default":0},
  project: {"pattern":"^[a-z0-9-]{1,40}$","maxLength":40},
  queue: {"pattern":"^[a-z0-9_.-]{1,64}$","maxLength":64,"default":"default"},
  timeout_seconds: {"minimum":1,"maximum":86400,"default":null},
  timezone: {"minLength":1,"maxLength":64,"default":"UTC"},
  upstream: {"maxItems":20,"default":[]},
} as const;

export const SchedulePauseRules = {
  reason: {"maxLength":1000,"default":null},
  until: {"default":null},
} as const;

export const ScheduleUpdateRules = {
  cron: {"minLength":1,"maxLength":200},
  description: {"maxLength":2000},
  handler: {"minLength":1,"maxLength":200},
  max_attempts: {"minimum":1,"maximum":100},
  name: {"minLength":1,"maxLength":200},
  notify: {"maxItems":20,"items":{"pattern":"^[a-z0-9_.-]{1,64}$","maxLength":64}},
  priority: {"minimum":-100,"maximum":100},
  queue: {"pattern":"^[a-z0-9_.-]{1,64}$","maxLength":64},
  timeout_seconds: {"minimum":1,"maximum":86400},
  timezone: {"minLength":1,"maxLength":64},
  upstream: {"maxItems":20},
} as const;

export const TokenCreateRules = {
  expires_at: {"default":null},
  name: {"minLength":1,"maxLength":100},
  project: {"pattern":"^[a-z0-9-]{1,40}$","maxLength":40,"default":null},
  role: {"default":null},
} as const;

export const UpstreamRules = {
  run_when: {"default":"succeeded"},
  schedule: {"minimum":1,"maximum":9223372036854776000},
  wait_seconds: {"minimum":1,"maximum":31622400,"default":null},
} as const;

export const UserCreateRules = {
  password: {"minLength":8,"maxLength":1024},
  projects: {"default":null},
  username: {"minLength":1,"maxLength":64},
} as const;
