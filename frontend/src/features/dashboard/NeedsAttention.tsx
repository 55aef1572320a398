import { Anchor, Table, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { Schedule } from '../../api/types';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { ScheduleStateBadge, scheduleState } from '../../components/ScheduleState';
import { ScheduleCause } from '../../components/ScheduleCause';
import { useAttentionSchedules } from './api/list-attention-schedules';

/** Why the schedule is here, in a few words: the streak, or the alerts that fire. */
function why(s: Schedule): string {
  const firing = Object.entries(s.health.alerts)
    .filter(([, a]) => a.state === 'firing')
    .map(([kind]) => kind.replace('_', ' '));
  const parts = [];
  if (s.health.consecutive_failures > 0) parts.push(s.health.consecutive_failures === 1 ? 'the last run died' : `the last ${s.health.consecutive_failures} runs died`);
  if (firing.length) parts.push(`alerts firing: ${firing.join(', ')}`);
  return parts.join('; ') || `health: ${s.health.state}`;
}

/** Schedules whose health is failing, late or silent: the dashboard's first question answered. */
export function NeedsAttention({ refetchInterval }: { refetchInterval: number | false }) {
  const attention = useAttentionSchedules(refetchInterval);
  return (
    <QueryState
      isPending={attention.isPending}
      error={attention.data ? null : attention.error}
      onRetry={() => attention.refetch()}
      isEmpty={attention.data?.items.length === 0}
      empty="Every schedule is healthy."
    >
      <Table.ScrollContainer type="native" minWidth={520} tabIndex={0} aria-label="Schedules needing attention (scrollable)">
        <Table fz="sm" aria-label="Schedules needing attention">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Schedule</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Since</Table.Th>
              <Table.Th>Why</Table.Th>
              <Table.Th>Last success</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {attention.data?.items.map((s) => (
              <Table.Tr key={s.id} data-schedule={s.name}>
                <Table.Td>
                  <Anchor component={Link} to={`/schedules/${s.id}`}>
                    {s.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  <ScheduleStateBadge state={scheduleState(s, undefined)} />
                </Table.Td>
                <Table.Td>
                  <RelativeTime iso={s.health.since} />
                </Table.Td>
                <Table.Td maw={320}>
                  <Text size="sm">{why(s)}</Text>
                  {/* The cause beside the symptom: its last error, its paused queue (issue 45). */}
                  <Text size="sm">
                    <ScheduleCause schedule={s} inline={false} />
                  </Text>
                </Table.Td>
                <Table.Td>{s.health.last_success_at ? <RelativeTime iso={s.health.last_success_at} /> : 'never'}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </QueryState>
  );
}
