import { Group, Text, UnstyledButton } from '@mantine/core';
import { JOB_STATUSES, type JobStatus } from '../../api/types';
import { useJobStatusCounts } from './api/count-jobs-by-status';

const LABEL: Record<JobStatus, string> = {
  WAITING: 'Waiting',
  PENDING: 'Pending',
  RUNNING: 'Running',
  SUCCEEDED: 'Succeeded',
  DEAD: 'Dead',
  CANCELLED: 'Cancelled',
};

/** Which tab a status filter is: none is All, exactly one is that status, several is no tab. */
export function activeTab(statuses: JobStatus[]): JobStatus | 'ALL' | null {
  if (statuses.length === 0) return 'ALL';
  return statuses.length === 1 ? (statuses[0] ?? null) : null;
}

/**
 * Oban-style status tabs with counts: one click to the dead jobs, and how many there are before
 * opening them. The counts are of the whole scope (the chosen project, the queue filter, deliveries
 * in or out as the list) from the API's counters; the other filters are not counted, and the
 * line under the tabs says so when one is set.
 */
export function StatusTabs({
  statuses,
  queue,
  excludeDeliveries,
  otherFilters,
  refetchInterval,
  onChoose,
}: {
  statuses: JobStatus[];
  queue?: string;
  excludeDeliveries: boolean;
  otherFilters: boolean;
  refetchInterval: number | false;
  onChoose: (status: JobStatus | null) => void;
}) {
  const counts = useJobStatusCounts({ queue, exclude_trigger: excludeDeliveries ? ['notification'] : undefined }, refetchInterval);
  const active = activeTab(statuses);
  const by = counts.data?.counts as Record<string, number> | undefined;
  const total = by ? Object.values(by).reduce((a, b) => a + b, 0) : undefined;
  const tab = (key: JobStatus | 'ALL', label: string, n: number | undefined) => (
    <UnstyledButton
      key={key}
      className="cp-status-tab"
      aria-pressed={active === key}
      data-status-tab={key}
      onClick={() => onChoose(key === 'ALL' ? null : key)}
    >
      {label} <span className="cp-status-tab-count">{n === undefined ? '…' : n.toLocaleString('en-US')}</span>
    </UnstyledButton>
  );
  return (
    <div>
      <Group gap={4} wrap="wrap" role="group" aria-label="Job status" className="cp-status-tabs">
        {tab('ALL', 'All', total)}
        {JOB_STATUSES.map((s) => tab(s, LABEL[s], by?.[s]))}
      </Group>
      {otherFilters && (
        <Text size="xs" c="dimmed" mt={2}>
          Counts are of every job{queue ? ` in queue ${queue}` : ''}, before the other filters.
        </Text>
      )}
    </div>
  );
}
