import { AlertsRules, ScheduleCreateRules, UpstreamRules } from '../../api/rules';
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

// The server's rules for a schedule (published in its OpenAPI document, generated into api/rules.ts).
const RULES = ScheduleCreateRules;
const DEFAULTS = {
  description: RULES.description.default,
  payload: JSON.stringify(RULES.payload.default),
  paused: RULES.paused.default,
  priority: RULES.priority.default,
  max_attempts: RULES.max_attempts.default,
  overlap: RULES.overlap.default,
  misfire: RULES.misfire.default,
  queue: RULES.queue.default,
} as const;
const QUEUE = new RegExp(RULES.queue.pattern);

export function emptyScheduleForm(): ScheduleFormValues {
  return {
    name: '',
    description: DEFAULTS.description,
    handler: '',
    payload: DEFAULTS.payload,
    cron: '0 0 9 * * *',
    timezone: viewerTimeZone(),
    paused: DEFAULTS.paused,
    priority: DEFAULTS.priority,
    max_attempts: DEFAULTS.max_attempts,
    timeout_seconds: '',
    overlap: DEFAULTS.overlap,
    misfire: DEFAULTS.misfire,
    queue: DEFAULTS.queue,
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

// A typographic minus, as the rest of the console writes negative numbers.
const minus = (n: number) => (n < 0 ? `−${-n}` : String(n));

const intIn = (v: number | string, min: number, max: number) => {
  const n = Number(v);
  return v !== '' && Number.isInteger(n) && n >= min && n <= max;
};

/** What the form can tell before asking the server; the server's 422 field errors are shown the same way. */
export function validateScheduleForm(v: ScheduleFormValues, payloadSchema?: JsonSchema): ScheduleFormErrors {
  const errors: ScheduleFormErrors = {};
  if (!v.name.trim()) errors.name = 'Name is required';
  else if (v.name.length > RULES.name.maxLength) errors.name = `Name is at most ${RULES.name.maxLength} characters`;
  if (!v.handler) errors.handler = 'Choose a handler';
  const cron = checkCron(v.cron);
  if (!cron.valid) errors.cron = cron.message;
  if (!isValidTimeZone(v.timezone)) errors.timezone = `${v.timezone} is not an IANA time zone`;
  const payload = checkPayloadText(v.payload, payloadSchema);
  if (payload.errors.length) errors.payload = payload.errors.join('; ');
  const { priority, max_attempts, timeout_seconds } = RULES;
  if (!intIn(v.priority, priority.minimum, priority.maximum))
    errors.priority = `Priority is a whole number from ${minus(priority.minimum)} to ${priority.maximum}`;
  if (!intIn(v.max_attempts, max_attempts.minimum, max_attempts.maximum))
    errors.max_attempts = `Max attempts is a whole number from ${max_attempts.minimum} to ${max_attempts.maximum}`;
  if (!QUEUE.test(v.queue)) errors.queue = `Queue: 1 to ${RULES.queue.maxLength} of a-z, 0-9, _ . -`;
  if (v.timeout_seconds !== '' && !intIn(v.timeout_seconds, timeout_seconds.minimum, timeout_seconds.maximum))
    errors.timeout_seconds = `Timeout is a whole number of seconds from ${timeout_seconds.minimum} to ${timeout_seconds.maximum} (or empty for the handler default)`;
  const streak = AlertsRules.consecutive_failures;
  if (v.consecutive_failures !== '' && !intIn(v.consecutive_failures, streak.minimum, streak.maximum))
    errors.consecutive_failures = `A whole number of runs from ${streak.minimum} to ${streak.maximum} (or empty: off)`;
  for (const k of ['max_lateness_seconds', 'max_runtime_seconds', 'no_success_within_seconds'] as const)
    if (v[k] !== '' && !intIn(v[k], AlertsRules[k].minimum, AlertsRules[k].maximum))
      errors[k] = `A whole number of seconds, at least ${AlertsRules[k].minimum} (or empty: off)`;
  const chosen = v.upstream.map((u) => u.schedule);
  if (chosen.some((u) => u === '')) errors.upstream = 'Choose a schedule for every upstream row (or remove the row)';
  else if (new Set(chosen).size !== chosen.length) errors.upstream = 'An upstream schedule is listed twice';
  else if (v.upstream.some((u) => u.wait_seconds !== '' && !intIn(u.wait_seconds, UpstreamRules.wait_seconds.minimum, UpstreamRules.wait_seconds.maximum)))
    errors.upstream = `Wait: a whole number of seconds, at least ${UpstreamRules.wait_seconds.minimum} (or empty: until the next fire)`;
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
