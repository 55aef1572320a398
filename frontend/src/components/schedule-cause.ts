/** Why a schedule looks the way it does, from what the API already says (issue 45, review
 * 2026-12-05 §5.9): a late schedule whose queue is paused says the queue is paused; a failing one
 * says its last error; a paused one says until when and why. */

type ScheduleLike = {
  project: string;
  queue: string;
  paused: boolean;
  paused_until?: string | null;
  pause_reason?: string | null;
  deleted_at?: string | null;
  last_error?: string | null;
};
type QueueLike = { project: string; name: string; paused: boolean; paused_reason?: string | null; paused_by?: string | null };

export type Cause =
  | { kind: 'paused'; until: string | null; reason: string | null }
  | { kind: 'queue-paused'; queue: string; project: string; reason: string | null }
  | { kind: 'error'; headline: string };

/** The causes to show beside a schedule's state, most telling first (a schedule can have two: its
 * queue is paused and its last run died). */
export function scheduleCauses(schedule: ScheduleLike, queues: QueueLike[] | undefined): Cause[] {
  if (schedule.deleted_at) return [];
  const causes: Cause[] = [];
  if (schedule.paused) causes.push({ kind: 'paused', until: schedule.paused_until ?? null, reason: schedule.pause_reason ?? null });
  const queue = queues?.find((q) => q.project === schedule.project && q.name === schedule.queue);
  if (queue?.paused) causes.push({ kind: 'queue-paused', queue: queue.name, project: queue.project, reason: queue.paused_reason ?? null });
  if (schedule.last_error) causes.push({ kind: 'error', headline: schedule.last_error });
  return causes;
}

/** The Queues page narrowed to one queue (`?queue=project/name`, as the page reads it). */
export function queueHref(project: string, queue: string): string {
  return `/queues?queue=${encodeURIComponent(`${project}/${queue}`)}`;
}
