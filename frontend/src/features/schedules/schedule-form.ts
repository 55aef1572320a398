import type { Schedule, ScheduleCreate } from '../../api/types';
import { checkCron } from '../../lib/cron-syntax';
import { checkPayloadText, type JsonSchema } from '../../lib/json-schema';
import { isValidTimeZone, viewerTimeZone } from '../../lib/time';

/** One upstream schedule of a chain, as the form edits it ('' while not chosen / no limit). */
export interface UpstreamRow {
  schedule: number | '';
  run_when: 'succeeded' | 'finished';
  wait_seconds: number | string;
}

export interface ScheduleFormValues {
  name: string;
  description: string;
  handler: string;
  payload: string; // JSON text as typed
  cron: string;
  timezone: string;
  paused: boolean;
  priority: number | string;
  max_attempts: number | string;
  timeout_seconds: number | string;
  overlap: 'forbid' | 'allow';
  misfire: 'skip' | 'fire_once';
  queue: string;
  /** Chosen at creation only: a schedule stays in its project. */
  project: string;
  // Alerts: empty means off.
  on_failure: boolean;
  consecutive_failures: number | string;
  max_lateness_seconds: number | string;
  max_runtime_seconds: number | string;
  no_success_within_seconds: number | string;
  notify: string[];
  /** Schedules whose fires this one waits on (a chain). */
  upstream: UpstreamRow[];
}

const ALERT_LIMIT = 366 * 86400;

export function emptyScheduleForm(): ScheduleFormValues {
  return {
    name: '',
    description: '',
    handler: '',
    payload: '{}',
    cron: '0 0 9 * * *',
    timezone: viewerTimeZone(),
    paused: false,
    priority: 0,
    max_attempts: 3,
    timeout_seconds: '',
    overlap: 'forbid',
    misfire: 'skip',
    queue: 'default',
    project: 'default',
    on_failure: false,
    consecutive_failures: '',
    max_lateness_seconds: '',
    max_runtime_seconds: '',
    no_success_within_seconds: '',
    notify: [],
    upstream: [],
  };
}

export function formFromSchedule(s: Schedule): ScheduleFormValues {
  return {
    name: s.name,
    description: s.description ?? '',
    handler: s.handler,
    payload: JSON.stringify(s.payload ?? {}, null, 2),
    cron: s.cron,
    timezone: s.timezone,
    paused: s.paused,
    priority: s.priority,
    max_attempts: s.max_attempts,
    timeout_seconds: s.timeout_seconds ?? '',
    overlap: s.overlap,
    misfire: s.misfire,
    queue: s.queue,
    project: s.project,
    on_failure: s.alerts.on_failure ?? false,
    consecutive_failures: s.alerts.consecutive_failures ?? '',
    max_lateness_seconds: s.alerts.max_lateness_seconds ?? '',
    max_runtime_seconds: s.alerts.max_runtime_seconds ?? '',
    no_success_within_seconds: s.alerts.no_success_within_seconds ?? '',
    notify: [...s.notify],
    upstream: (s.upstream ?? []).map((u) => ({ schedule: u.schedule, run_when: u.run_when ?? 'succeeded', wait_seconds: u.wait_seconds ?? '' })),
  };
}

export type ScheduleFormErrors = Partial<Record<keyof ScheduleFormValues, string>>;

const intIn = (v: number | string, min: number, max: number) => {
  const n = Number(v);
  return v !== '' && Number.isInteger(n) && n >= min && n <= max;
};

/** What the form can tell before asking the server; the server's 422 field errors are shown the same way. */
export function validateScheduleForm(v: ScheduleFormValues, payloadSchema?: JsonSchema): ScheduleFormErrors {
  const errors: ScheduleFormErrors = {};
  if (!v.name.trim()) errors.name = 'Name is required';
  else if (v.name.length > 200) errors.name = 'Name is at most 200 characters';
  if (!v.handler) errors.handler = 'Choose a handler';
  const cron = checkCron(v.cron);
  if (!cron.valid) errors.cron = cron.message;
  if (!isValidTimeZone(v.timezone)) errors.timezone = `${v.timezone} is not an IANA time zone`;
  const payload = checkPayloadText(v.payload, payloadSchema);
  if (payload.errors.length) errors.payload = payload.errors.join('; ');
  if (!intIn(v.priority, -100, 100)) errors.priority = 'Priority is a whole number from −100 to 100';
  if (!intIn(v.max_attempts, 1, 100)) errors.max_attempts = 'Max attempts is a whole number from 1 to 100';
  if (!/^[a-z0-9_.-]{1,64}$/.test(v.queue)) errors.queue = 'Queue: 1 to 64 of a-z, 0-9, _ . -';
  if (v.timeout_seconds !== '' && !intIn(v.timeout_seconds, 1, 86400))
    errors.timeout_seconds = 'Timeout is a whole number of seconds from 1 to 86400 (or empty for the handler default)';
  if (v.consecutive_failures !== '' && !intIn(v.consecutive_failures, 2, 50))
    errors.consecutive_failures = 'A whole number of runs from 2 to 50 (or empty: off)';
  for (const k of ['max_lateness_seconds', 'max_runtime_seconds', 'no_success_within_seconds'] as const)
    if (v[k] !== '' && !intIn(v[k], 1, ALERT_LIMIT)) errors[k] = 'A whole number of seconds, at least 1 (or empty: off)';
  const chosen = v.upstream.map((u) => u.schedule);
  if (chosen.some((u) => u === '')) errors.upstream = 'Choose a schedule for every upstream row (or remove the row)';
  else if (new Set(chosen).size !== chosen.length) errors.upstream = 'An upstream schedule is listed twice';
  else if (v.upstream.some((u) => u.wait_seconds !== '' && !intIn(u.wait_seconds, 1, ALERT_LIMIT)))
    errors.upstream = 'Wait: a whole number of seconds, at least 1 (or empty: until the next fire)';
  return errors;
}

export function toScheduleBody(v: ScheduleFormValues): ScheduleCreate {
  const cron = checkCron(v.cron);
  return {
    name: v.name.trim(),
    description: v.description,
    handler: v.handler,
    payload: JSON.parse(v.payload.trim() || '{}') as Record<string, unknown>,
    cron: cron.valid ? cron.canonical : v.cron,
    timezone: v.timezone,
    paused: v.paused,
    priority: Number(v.priority),
    max_attempts: Number(v.max_attempts),
    ...(v.timeout_seconds !== '' && { timeout_seconds: Number(v.timeout_seconds) }),
    overlap: v.overlap,
    misfire: v.misfire,
    queue: v.queue,
    alerts: {
      on_failure: v.on_failure,
      consecutive_failures: orNull(v.consecutive_failures),
      max_lateness_seconds: orNull(v.max_lateness_seconds),
      max_runtime_seconds: orNull(v.max_runtime_seconds),
      no_success_within_seconds: orNull(v.no_success_within_seconds),
    },
    notify: v.notify,
    upstream: v.upstream.map((u) => ({ schedule: Number(u.schedule), run_when: u.run_when, wait_seconds: orNull(u.wait_seconds) })),
  };
}

const orNull = (v: number | string) => (v === '' ? null : Number(v));
