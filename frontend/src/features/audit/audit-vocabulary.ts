import type { AuditEvent } from '../../api/types';

type AuditAction = AuditEvent['action'];
type TargetType = NonNullable<AuditEvent['target_type']>;

// A Record over the OpenAPI enum: a name the API adds or drops fails `tsc` here until listed.
const ACTIONS: Record<AuditAction, true> = {
  'auth.login': true, 'auth.login_failed': true, 'auth.logout': true, 'auth.refresh_reuse': true,
  'user.create': true, 'user.update': true, 'user.lock': true, 'user.unlock': true, 'user.disable': true, 'user.enable': true,
  'user.password_change': true,
  'token.create': true, 'token.delete': true, 'token.revoke': true,
  'project.create': true, 'project.update': true, 'project.delete': true, 'project.member_set': true, 'project.member_remove': true,
  'schedule.create': true, 'schedule.update': true, 'schedule.pause': true, 'schedule.resume': true, 'schedule.delete': true,
  'schedule.trigger': true, 'schedule.rollback': true, 'schedule.backfill': true,
  'schedule.alert.ok': true, 'schedule.alert.firing': true, 'schedule.alert.recovered': true,
  'job.create': true, 'job.cancel': true, 'job.retry': true, 'job.rerun': true, 'job.bulk_cancel': true, 'job.bulk_retry': true,
  'attempt.reclaim': true,
  'queue.pause': true, 'queue.resume': true, 'queue.update': true,
  'notification_channel.create': true, 'notification_channel.delete': true, 'notification_channel.test': true,
  'chaos.start': true, 'chaos.stop': true, 'chaos.expire': true,
  'leader.acquire': true, 'leader.lose': true,
  'audit.redacted': true,
  'batch.create': true, 'batch.add_jobs': true,
};

/** Every action the API names, and their resource prefixes ("job.") for the action filter. */
export const AUDIT_ACTIONS = Object.keys(ACTIONS) as AuditAction[];
export const ACTION_PREFIXES = [...new Set(AUDIT_ACTIONS.map((a) => a.slice(0, a.indexOf('.') + 1)))];

// Where each target type is shown; null: it has no page (sessions, tokens, leases, batches).
const PAGES: Record<TargetType, ((id: string) => string) | null> = {
  job: (id) => `/jobs/${id}`,
  schedule: (id) => `/schedules/${id}`,
  user: (id) => `/users?q=${encodeURIComponent(`#${id}`)}`,
  project: (id) => `/projects/${encodeURIComponent(id)}`,
  queue: (id) => `/queues?queue=${encodeURIComponent(id)}`,
  notification_channel: () => '/notifications',
  chaos_experiment: () => '/chaos',
  token: null,
  session: null,
  lease: null,
  batch: null,
};

/** The console page an event's target is on, or null. A deleted schedule keeps its page (it
 * says DELETED there); other deleted targets have none left to open. */
export function targetPath(event: Pick<AuditEvent, 'target_type' | 'target_id' | 'target_deleted'>): string | null {
  const { target_type: type, target_id: id, target_deleted: deleted } = event;
  if (!type || !id) return null;
  if (deleted && type !== 'schedule') return null;
  return PAGES[type]?.(id) ?? null;
}
