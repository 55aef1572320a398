import { Badge } from '@mantine/core';
import { FailedJobStatus } from '../api/rules';

// Apart from the run strip (components/ScheduleHealth.tsx): the dashboard shows these two, and the
// strip's Tooltip would otherwise ride into the first download with them (issue 23).

export type ScheduleState = 'ok' | 'failing' | 'late' | 'silent' | 'paused' | 'deleted' | 'new' | 'active';

type ScheduleLike = { paused: boolean; deleted_at?: string | null; health?: { state?: string | null } | null };
type RunLike = { id: number; status: string; finished_at?: string | null };

/** A run (a job) that counts as a failure of its schedule, as the server's health judges it. */
export const FAILED = new Set<string>(FailedJobStatus);

/** A schedule's state at a glance. The API's `health.state` wins when the server computes it;
 * until then the newest finished run decides: a schedule whose last run died is failing, never a
 * green "active". */
export function scheduleState(schedule: ScheduleLike, recent: RunLike[] | undefined): ScheduleState {
  if (schedule.deleted_at) return 'deleted';
  if (schedule.paused) return 'paused';
  const fromServer = schedule.health?.state;
  if (fromServer === 'ok' || fromServer === 'failing' || fromServer === 'late' || fromServer === 'silent' || fromServer === 'paused') return fromServer;
  if (recent === undefined) return 'active'; // runs not known here: enabled, health unknown
  const finished = recent.filter((j) => j.finished_at);
  if (finished.length === 0) return 'new';
  const newest = finished[0];
  return newest && FAILED.has(newest.status) ? 'failing' : 'ok';
}

// Lower case in the DOM (the badge shows capitals), as the status words elsewhere.
// Outline badges with black/white text: every pair passes 4.5:1 in light and dark.
const LOOK: Record<ScheduleState, { color: string; label: string }> = {
  ok: { color: 'green', label: 'ok' },
  failing: { color: 'red', label: 'failing' },
  late: { color: 'orange', label: 'late' },
  silent: { color: 'grape', label: 'silent' },
  paused: { color: 'yellow', label: 'paused' },
  deleted: { color: 'gray', label: 'deleted' },
  new: { color: 'gray', label: 'active' },
  active: { color: 'blue', label: 'active' },
};

export function ScheduleStateBadge({ state }: { state: ScheduleState }) {
  const look = LOOK[state];
  return (
    <Badge color={look.color} variant="outline" className="cp-state-badge" data-state={state}>
      {look.label}
    </Badge>
  );
}
