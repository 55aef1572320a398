import { Anchor, Badge, Group, Text, Tooltip } from '@mantine/core';
import { Link } from 'react-router';

export type ScheduleState = 'ok' | 'failing' | 'late' | 'silent' | 'paused' | 'deleted' | 'new' | 'active';

type ScheduleLike = { paused: boolean; deleted_at?: string | null; health?: { state?: string | null } | null };
type RunLike = { id: number; status: string; finished_at?: string | null };

const FAILED = new Set(['DEAD', 'FAILED', 'TIMED_OUT', 'LOST']);

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

const RUN_COLOR: Record<string, string> = { SUCCEEDED: 'green', RUNNING: 'blue', PENDING: 'gray', CANCELLED: 'yellow' };

/** The last runs, oldest left, one square each (red: failed), linking to each job. */
export function RunStrip({ runs, label }: { runs: RunLike[]; label: string }) {
  if (runs.length === 0)
    return (
      <Text size="xs" c="dimmed">
        never ran
      </Text>
    );
  const ordered = [...runs].reverse();
  const failed = runs.filter((r) => FAILED.has(r.status)).length;
  return (
    <Group gap={2} wrap="nowrap" aria-label={`${label}: last ${runs.length} runs, ${failed} failed`} role="group">
      {ordered.map((r) => (
        <Tooltip key={r.id} label={`job ${r.id}: ${r.status}`}>
          <Anchor component={Link} to={`/jobs/${r.id}`} aria-label={`job ${r.id}, ${r.status}`} className="cp-run-cell" data-status={r.status} bg={FAILED.has(r.status) ? 'red.8' : `${RUN_COLOR[r.status] ?? 'gray'}.7`} />
        </Tooltip>
      ))}
    </Group>
  );
}
