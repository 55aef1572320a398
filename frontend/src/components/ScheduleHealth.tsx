import { Anchor, Group, Text, Tooltip } from '@mantine/core';
import { Link } from 'react-router';
import { FAILED } from './ScheduleState';

export { scheduleState, ScheduleStateBadge, type ScheduleState } from './ScheduleState';

type RunLike = { id: number; status: string; finished_at?: string | null };

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
