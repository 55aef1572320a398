/**
 * Typed test data: one complete, valid object per API shape, with overrides. Every field the API
 * requires is spelled out here, so when the OpenAPI document gains, renames or drops a field,
 * `tsc` fails in this file instead of the fakes drifting silently from what the server sends.
 */
import type { components } from '../api/schema';
import type {
  Attempt, AuditEvent, AuditVerify, Batch, ChaosExperiment, CronDescription, Handler, Identity, Job, JobDetail, Me, Persona,
  Schedule, Stats, StatsWindows, User, WindowCounts,
} from '../api/types';

const AT = '2026-11-29T08:00:00Z';

export function aJob(overrides: Partial<Job> = {}): Job {
  return {
    id: 1, handler: 'noop', payload: {}, status: 'PENDING', priority: 0, run_at: AT, attempt_count: 0,
    max_attempts: 3, timeout_seconds: null, schedule_id: null, schedule_version: null, trigger: 'api',
    idempotency_key: null, requested_by: null, cancel_requested: false, result: null, error: null,
    created_at: AT, started_at: null, finished_at: null, project: 'default', queue: 'default',
    concurrency_key: null, rerun_of: null,
    ...overrides,
  };
}

export function aBatch(overrides: Partial<Batch> = {}): Batch {
  return {
    id: 1, project: 'default', created_by: 'alice', created_at: AT, finished_at: null, callback_job_id: null,
    total: 0, waiting: 0, pending: 0, running: 0, succeeded: 0, dead: 0, cancelled: 0, state: 'running',
    ...overrides,
  };
}

export function anAttempt(overrides: Partial<Attempt> = {}): Attempt {
  return {
    number: 1, status: 'SUCCEEDED', worker_id: 'host:1:abc', started_at: AT, finished_at: AT,
    heartbeat_at: null, lease_expires_at: AT, error: null, lost_reason: null, output_bytes: 0,
    ...overrides,
  };
}

export function aJobDetail(overrides: Partial<JobDetail> = {}): JobDetail {
  return { ...aJob(), attempts: [], depends_on: [], dependents: [], ...overrides };
}

export function aSchedule(overrides: Partial<Schedule> = {}): Schedule {
  return {
    id: 1, name: 'nightly', description: '', handler: 'noop', payload: {}, cron: '0 0 2 * * *', timezone: 'UTC',
    priority: 0, max_attempts: 3, timeout_seconds: null, overlap: 'forbid', misfire: 'skip', paused: false,
    pause_reason: null, paused_until: null, next_run_at: AT, last_run_at: null, deleted_at: null,
    created_at: AT, updated_at: AT, version: 1, project: 'default', queue: 'default', alerts: {}, notify: [],
    upstream: [], downstream: [], last_error: null,
    health: { state: 'ok', since: AT, consecutive_failures: 0, last_success_at: null, alerts: {} },
    ...overrides,
  };
}

export function aUser(overrides: Partial<User> = {}): User {
  return {
    id: 1, username: 'admin', role: 'ADMIN', locked: false, disabled: false, is_persona: false,
    last_login_at: null, created_at: AT, updated_at: AT,
    ...overrides,
  };
}

export function aHandler(overrides: Partial<Handler> = {}): Handler {
  return { name: 'noop', description: '', payload_schema: {}, default_timeout_seconds: 60, scope: 'project', ...overrides };
}

export function aChaosExperiment(overrides: Partial<ChaosExperiment> = {}): ChaosExperiment {
  return {
    id: 1, kind: 'leader_stepdown', params: {}, created_by: 'admin', started_at: AT, expires_at: AT,
    ended_at: null, end_reason: null,
    ...overrides,
  };
}

export function anAuditEvent(overrides: Partial<AuditEvent> = {}): AuditEvent {
  return {
    id: 1, at: AT, actor: 'admin', actor_role: 'ADMIN', action: 'job.create', target_type: 'job',
    target_id: '1', details: {}, ip: '127.0.0.1', request_id: null, project: 'default',
    ...overrides,
  };
}

export function anIdentity(overrides: Partial<Identity> = {}): Identity {
  return { id: 1, username: 'ada', role: 'ADMIN', ...overrides };
}

/** `/auth/me` for a local account (no external identity). */
export function aMe(overrides: Partial<Me> = {}): Me {
  return { ...anIdentity(), identity: null, scope: null, can_change_password: true, ...overrides };
}

export function aPersona(overrides: Partial<Persona> = {}): Persona {
  return { name: 'viewer', role: 'VIEWER', label: 'Viewer', ...overrides };
}

export function someStats(overrides: Partial<Stats> = {}): Stats {
  return { jobs_by_status: {}, deliveries_by_status: {}, failing_channels: [], throughput: [], leader: null, workers: [], chaos: [], ...overrides };
}

export function someWindowCounts(overrides: Partial<WindowCounts> = {}): WindowCounts {
  return { succeeded: 0, dead: 0, cancelled: 0, failure_rate: null, claimed: 0, claim_lag_mean_seconds: null, claim_lag_max_seconds: null, ...overrides };
}

/** GET /stats/windows with nothing in it: 24 empty hours ending at `now`. */
export function someWindows(overrides: Partial<StatsWindows> = {}): StatsWindows {
  const now = '2026-12-06T03:25:00Z';
  const top = Date.parse('2026-12-06T03:00:00Z');
  return {
    now,
    hour: { since: '2026-12-06T02:20:00Z', jobs: someWindowCounts(), deliveries: someWindowCounts() },
    day: { since: '2026-12-05T03:20:00Z', jobs: someWindowCounts(), deliveries: someWindowCounts() },
    throughput: Array.from({ length: 24 }, (_, i) => ({
      hour: new Date(top - (23 - i) * 3_600_000).toISOString().replace('.000Z', 'Z'),
      succeeded: 0, dead: 0, deliveries_succeeded: 0, deliveries_dead: 0,
    })),
    by_handler: [], by_schedule: [], queues: [], leader_terms: [],
    ...overrides,
  };
}

/** An intact chain of `checked` events. */
export function anAuditVerify(overrides: Partial<AuditVerify> = {}): AuditVerify {
  return {
    ok: true, checked: 9, first_bad_id: null, truncated: false, head_id: 9, sealed_id: 9, anchor_id: 9, unsealed: 0,
    bad_checkpoints: 0, reasons: [],
    ...overrides,
  };
}

export function aCronDescription(overrides: Partial<CronDescription> = {}): CronDescription {
  return { expression: '0 0 9 * * *', description: '', next_runs: [], ...overrides };
}

/** A problem+json body (the API's `Error` schema), with field errors for a 422. */
export function aProblem(status: number, detail: string, errors?: Record<string, unknown>): components['schemas']['Error'] {
  return { type: 'about:blank', title: 'Error', status, detail, ...(errors ? { errors } : {}) };
}

/** A sign-in's answer as the console gets it: the tokens stay in HttpOnly cookies, not the body. */
export function aLoginResponse(overrides: Partial<components['schemas']['LoginResponse']> = {}): components['schemas']['LoginResponse'] {
  return { token_type: 'Bearer', expires_in: 900, user: anIdentity(), ...overrides };
}
