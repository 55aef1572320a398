import { Anchor, Table, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { StatsWindows } from '../../api/types';
import { formatLag, formatRate, queuesByActivity } from '../../lib/windows';

/** Claims and claim lag (run_at to claim) per queue, last hour and 24 hours (GET /stats/windows). */
export function QueueLatency({ windows }: { windows: StatsWindows }) {
  const queues = queuesByActivity(windows);
  if (queues.length === 0) return <Text c="dimmed">No job was claimed or finished in 24 hours.</Text>;
  return (
    // Its own keyboard-scrollable box: on a phone the columns are wider than the screen.
    <Table.ScrollContainer type="native" minWidth={600} tabIndex={0} aria-label="Queue latency (scrollable)">
      <Table fz="sm" aria-label="Queue latency">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Queue</Table.Th>
            <Table.Th ta="right">Claims, 1 h</Table.Th>
            <Table.Th ta="right">Mean lag, 1 h</Table.Th>
            <Table.Th ta="right">Max lag, 1 h</Table.Th>
            <Table.Th ta="right">Mean lag, 24 h</Table.Th>
            <Table.Th ta="right">Finished, 24 h</Table.Th>
            <Table.Th ta="right">Failure rate, 24 h</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {queues.map((q) => (
            <Table.Tr key={`${q.project}/${q.queue}`} data-testid={`latency-${q.project}/${q.queue}`}>
              <Table.Td>
                <Anchor component={Link} to={`/queues?queue=${encodeURIComponent(`${q.project}/${q.queue}`)}`} size="sm">
                  {q.project}/{q.queue}
                </Anchor>
              </Table.Td>
              <Table.Td ta="right" style={{ whiteSpace: 'nowrap' }}>{q.hour.claimed}</Table.Td>
              <Table.Td ta="right" style={{ whiteSpace: 'nowrap' }}>{formatLag(q.hour.claim_lag_mean_seconds)}</Table.Td>
              <Table.Td ta="right" style={{ whiteSpace: 'nowrap' }}>{formatLag(q.hour.claim_lag_max_seconds)}</Table.Td>
              <Table.Td ta="right" style={{ whiteSpace: 'nowrap' }}>{formatLag(q.day.claim_lag_mean_seconds)}</Table.Td>
              <Table.Td ta="right" style={{ whiteSpace: 'nowrap' }}>{q.day.succeeded + q.day.dead}</Table.Td>
              <Table.Td ta="right" style={{ whiteSpace: 'nowrap' }}>{formatRate(q.day.failure_rate)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
