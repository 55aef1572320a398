import type { FireEntry, FireOutcome } from './api/list-schedule-fires';

/** What became of a fire time, as an operator scans for it: a fire that ran is told by its job's
 * end (a DEAD run is red, never the green of "enqueued", review 2026-12-05 §5.5), a fire that did
 * not run by why. */
export type FireResult =
  | 'succeeded'
  | 'dead'
  | 'running'
  | 'queued'
  | 'cancelled'
  | 'waiting'
  | 'due'
  | 'skipped_paused'
  | 'skipped_overlap'
  | 'skipped_misfire'
  | 'skipped_quota'
  | 'skipped_upstream'
  | 'deleted'
  | 'missing';

/** Colour and shape together (not colour alone): full bar = ran to an end, a mark inside says
 * which; hollow = not yet ended; short bar = skipped; dashed = waiting. */
export type FireShape = 'full' | 'cross' | 'hollow' | 'short' | 'dashed' | 'question';

export const RESULTS: Record<FireResult, { color: string; shape: FireShape; label: string }> = {
  succeeded: { color: 'green', shape: 'full', label: 'succeeded' },
  dead: { color: 'red', shape: 'cross', label: 'dead' },
  running: { color: 'blue', shape: 'hollow', label: 'running' },
  queued: { color: 'gray', shape: 'hollow', label: 'enqueued, not started' },
  cancelled: { color: 'gray', shape: 'cross', label: 'cancelled' },
  waiting: { color: 'yellow', shape: 'dashed', label: 'waiting for its upstream schedule' },
  due: { color: 'gray', shape: 'dashed', label: 'due, not enqueued yet' },
  skipped_paused: { color: 'yellow', shape: 'short', label: 'skipped: paused' },
  skipped_overlap: { color: 'orange', shape: 'short', label: 'skipped: previous run still going' },
  skipped_misfire: { color: 'orange', shape: 'short', label: 'skipped: scheduler was down (misfire)' },
  skipped_quota: { color: 'orange', shape: 'short', label: 'skipped: project over its pending-job quota' },
  skipped_upstream: { color: 'orange', shape: 'short', label: 'skipped: upstream fire failed or made no job' },
  deleted: { color: 'gray', shape: 'short', label: 'schedule deleted' },
  missing: { color: 'grape', shape: 'question', label: 'unexplained (a bug: please report)' },
};

const BY_OUTCOME: Record<Exclude<FireOutcome, 'enqueued'>, FireResult> = {
  waiting_upstream: 'waiting',
  skipped_upstream: 'skipped_upstream',
  pending: 'due',
  skipped_paused: 'skipped_paused',
  skipped_overlap: 'skipped_overlap',
  skipped_misfire: 'skipped_misfire',
  skipped_quota: 'skipped_quota',
  deleted: 'deleted',
  missing: 'missing',
};

const BY_JOB: Record<string, FireResult> = {
  SUCCEEDED: 'succeeded',
  DEAD: 'dead',
  RUNNING: 'running',
  PENDING: 'queued',
  WAITING: 'waiting',
  CANCELLED: 'cancelled',
};

export function fireResult(entry: Pick<FireEntry, 'outcome' | 'job_status'>): FireResult {
  if (entry.outcome !== 'enqueued') return BY_OUTCOME[entry.outcome];
  return BY_JOB[entry.job_status ?? ''] ?? 'queued';
}

/** Fires per result, in RESULTS order, only those present: the legend's counts. */
export function resultCounts(entries: Pick<FireEntry, 'outcome' | 'job_status'>[]): [FireResult, number][] {
  const counts = new Map<FireResult, number>();
  for (const e of entries) counts.set(fireResult(e), (counts.get(fireResult(e)) ?? 0) + 1);
  return (Object.keys(RESULTS) as FireResult[]).filter((r) => counts.has(r)).map((r) => [r, counts.get(r) ?? 0]);
}
