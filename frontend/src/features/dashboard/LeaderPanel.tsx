import { Code, Group, Stack, Table, Text } from '@mantine/core';
import { useEffect, useRef, useState } from 'react';
import { RelativeTime } from '../../components/RelativeTime';
import type { Stats } from '../../api/types';
import { formatDuration, formatExact } from '../../lib/time';

function useNow(ms = 1000) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

/** Remembers when the leader's owner last changed, as seen by this page (the API keeps no failover history). */
function useLastFailover(owner: string | null) {
  const last = useRef<{ owner: string | null; at: string | null }>({ owner, at: null });
  if (last.current.owner !== owner) {
    last.current = { owner, at: new Date().toISOString() };
  }
  return last.current.at;
}

export function LeaderPanel({ leader }: { leader: Stats['leader'] }) {
  const now = useNow();
  const lastFailover = useLastFailover(leader?.owner ?? null);
  if (!leader) {
    return (
      <Text className="cp-warning-text" role="status">
        No leader holds the lease: schedules are not firing until one is elected.
      </Text>
    );
  }
  const left = new Date(leader.expires_at).getTime() - now;
  return (
    <Stack gap={4}>
      <Group gap="xs">
        <Text size="sm" c="dimmed">
          Owner
        </Text>
        <Code>{leader.owner}</Code>
      </Group>
      <Table variant="vertical" withTableBorder fz="sm">
        <Table.Tbody>
          <Table.Tr>
            <Table.Th w={160}>Fencing token</Table.Th>
            <Table.Td>{leader.fencing_token}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Lease time left</Table.Th>
            <Table.Td title={formatExact(leader.expires_at)}>{left > 0 ? formatDuration(left) : <Text className="cp-warning-text" span>expired</Text>}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Last failover</Table.Th>
            <Table.Td>{lastFailover ? <RelativeTime iso={lastFailover} now={now} /> : 'none seen since this page opened'}</Table.Td>
          </Table.Tr>
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

export function WorkersTable({ workers }: { workers: Stats['workers'] }) {
  const now = useNow();
  if (workers.length === 0) return <Text c="dimmed">No workers are heartbeating.</Text>;
  return (
    // Its own keyboard-scrollable box: on a phone the five columns are wider than the screen.
    <Table.ScrollContainer type="native" minWidth={480} tabIndex={0} aria-label="Workers (scrollable)">
    <Table withTableBorder striped fz="sm" aria-label="Workers">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Worker</Table.Th>
          <Table.Th>Host</Table.Th>
          <Table.Th>PID</Table.Th>
          <Table.Th>Heartbeat age</Table.Th>
          <Table.Th>Running</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {workers.map((w) => (
          <Table.Tr key={w.id}>
            <Table.Td>
              <Code>{w.id}</Code>
            </Table.Td>
            <Table.Td>{w.host}</Table.Td>
            <Table.Td>{w.pid}</Table.Td>
            <Table.Td title={formatExact(w.heartbeat_at)}>{formatDuration(now - new Date(w.heartbeat_at).getTime())}</Table.Td>
            <Table.Td>{w.running}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
    </Table.ScrollContainer>
  );
}
