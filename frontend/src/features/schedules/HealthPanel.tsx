import { Anchor, Badge, Group, Paper, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { Schedule } from '../../api/types';
import { RelativeTime } from '../../components/RelativeTime';
import { ScheduleCause } from '../../components/ScheduleCause';
import { scheduleCauses } from '../../components/schedule-cause';
import { useQueues } from '../../api/queries/list-queues';
import { ScheduleStateBadge, scheduleState } from '../../components/ScheduleHealth';
import { useSession } from '../../lib/session';
import { scheduleQueryOptions } from './api/get-schedule';

const ALERT_ROWS: { kind: string; label: (a: Schedule['alerts']) => string | null }[] = [
  { kind: 'failure', label: (a) => (a.on_failure ? 'a run dies' : null) },
  { kind: 'consecutive_failures', label: (a) => (a.consecutive_failures ? `${a.consecutive_failures} runs in a row die` : null) },
  { kind: 'late', label: (a) => (a.max_lateness_seconds ? `a fire has not started within ${a.max_lateness_seconds} s` : null) },
  { kind: 'runtime', label: (a) => (a.max_runtime_seconds ? `a run takes longer than ${a.max_runtime_seconds} s` : null) },
  { kind: 'silent', label: (a) => (a.no_success_within_seconds ? `no success within ${a.no_success_within_seconds} s` : null) },
];

/** Health as the leader's evaluator sees it (refetched every 5 s), and each configured alert's state. */
export function HealthPanel({ id }: { id: number }) {
  const { can } = useSession();
  const { data: s } = useQuery({ ...scheduleQueryOptions(id), refetchInterval: (q) => (q.state.data?.deleted_at ? false : 5000) });
  const queues = useQueues();
  if (!s) return null;
  const configured = ALERT_ROWS.map((r) => ({ kind: r.kind, text: r.label(s.alerts) })).filter((r) => r.text);
  return (
    <Paper withBorder p="md" component="section" aria-label="Health and alerts">
      <Group justify="space-between" mb="xs">
        <Title order={2} size="h5">
          Health and alerts
        </Title>
        {can('ADMIN') && !s.deleted_at && (
          <Anchor component={Link} to={`/schedules/${id}/edit`} size="sm">
            Edit alerts
          </Anchor>
        )}
      </Group>
      <Table variant="vertical" fz="sm" aria-label="Health">
        <Table.Tbody>
          <Table.Tr>
            <Table.Th w={160}>Health</Table.Th>
            <Table.Td>
              <Group gap="xs">
                <ScheduleStateBadge state={scheduleState(s, undefined)} />
                <Text size="sm">
                  since <RelativeTime iso={s.health.since} />
                </Text>
              </Group>
            </Table.Td>
          </Table.Tr>
          {scheduleCauses(s, queues.data).length > 0 && (
            <Table.Tr>
              <Table.Th>Why</Table.Th>
              <Table.Td>
                <ScheduleCause schedule={s} inline={false} />
              </Table.Td>
            </Table.Tr>
          )}
          <Table.Tr>
            <Table.Th>Last success</Table.Th>
            <Table.Td>{s.health.last_success_at ? <RelativeTime iso={s.health.last_success_at} /> : 'never'}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Failures in a row</Table.Th>
            <Table.Td>{s.health.consecutive_failures}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Notifies</Table.Th>
            <Table.Td>{s.notify.length ? s.notify.join(', ') : 'no channel'}</Table.Td>
          </Table.Tr>
        </Table.Tbody>
      </Table>
      {configured.length === 0 ? (
        <Text size="sm" c="dimmed" mt="sm">
          No alerts configured.
        </Text>
      ) : (
        <Table fz="sm" mt="sm" aria-label="Alerts">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Alert when</Table.Th>
              <Table.Th>State</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {configured.map((r) => {
              const status = s.health.alerts[r.kind];
              const state = status?.state ?? 'ok';
              return (
                <Table.Tr key={r.kind} data-alert={r.kind} data-state={state}>
                  <Table.Td>{r.text}</Table.Td>
                  <Table.Td>
                    <Badge variant="outline" color={state === 'firing' ? 'red' : 'green'}>
                      {state}
                    </Badge>
                    {status && (
                      <Text span size="xs" ml="xs">
                        <RelativeTime iso={status.since} />
                      </Text>
                    )}
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      )}
    </Paper>
  );
}
