import { Anchor, SimpleGrid, Table, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import type { StatsWindows } from '../../api/types';
import { finishedOf, formatRate } from '../../lib/windows';

// The worst ones: the API orders them by failure rate, then dead count.
const SHOWN = 8;
const NOWRAP = { whiteSpace: 'nowrap' } as const;

function Rate({ rate }: { rate: number | null }) {
  return <Text span size="sm" fw={rate ? 700 : undefined}>{formatRate(rate)}</Text>;
}

/** The failure rate of the last 24 hours by handler and by schedule (GET /stats/windows), deliveries left out. */
export function FailureRates({ windows }: { windows: StatsWindows }) {
  const handlers = windows.by_handler.slice(0, SHOWN);
  const schedules = windows.by_schedule.slice(0, SHOWN);
  if (handlers.length === 0) return <Text c="dimmed">No jobs finished in 24 hours.</Text>;
  return (
    <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="md">
      <div>
        <Title order={3} size="h6" mb={4}>
          By handler
        </Title>
        <Table fz="sm" aria-label="Failure rate by handler, 24 hours">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Handler</Table.Th>
              <Table.Th ta="right" style={NOWRAP}>Dead of finished</Table.Th>
              <Table.Th ta="right">Rate</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {handlers.map((h) => (
              <Table.Tr key={h.handler}>
                <Table.Td style={{ wordBreak: 'break-all' }}>
                  <Anchor component={Link} to={`/jobs?handler=${encodeURIComponent(h.handler)}&status=DEAD`} size="sm">
                    {h.handler}
                  </Anchor>
                </Table.Td>
                <Table.Td ta="right" style={NOWRAP}>{finishedOf(h.day)}</Table.Td>
                <Table.Td ta="right" style={NOWRAP}>
                  <Rate rate={h.day.failure_rate} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </div>
      <div>
        <Title order={3} size="h6" mb={4}>
          By schedule
        </Title>
        {schedules.length === 0 ? (
          <Text c="dimmed" size="sm">
            No scheduled job finished in 24 hours.
          </Text>
        ) : (
          <Table fz="sm" aria-label="Failure rate by schedule, 24 hours">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Schedule</Table.Th>
                <Table.Th ta="right" style={NOWRAP}>Dead of finished</Table.Th>
                <Table.Th ta="right">Rate</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {schedules.map((s) => (
                <Table.Tr key={s.schedule_id}>
                  <Table.Td style={{ wordBreak: 'break-word' }}>
                    {s.name ? (
                      <Anchor component={Link} to={`/schedules/${s.schedule_id}`} size="sm">
                        {s.name}
                      </Anchor>
                    ) : (
                      <Text span size="sm" c="dimmed">
                        deleted schedule #{s.schedule_id}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td ta="right" style={NOWRAP}>{finishedOf(s.day)}</Table.Td>
                  <Table.Td ta="right" style={NOWRAP}>
                    <Rate rate={s.day.failure_rate} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </div>
    </SimpleGrid>
  );
}
