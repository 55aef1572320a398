import { Code, Group, Stack, Table, Text } from '@mantine/core';
import { useEffect, useState } from 'react';
import { RelativeTime } from '../../components/RelativeTime';
import type { Stats, StatsWindows } from '../../api/types';
import { formatDuration, formatExact } from '../../lib/time';

function useNow(ms = 1000) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

type Terms = StatsWindows['leader_terms'];

/** The leader terms of the audit trail (GET /stats/windows), newest first: who led, from when to when, and why it ended. */
export function LeaderTerms({ terms, now }: { terms: Terms; now?: number }) {
  if (terms.length === 0) return <Text size="sm" c="dimmed">No leader term in the audit trail yet.</Text>;
  return (
    <Table fz="xs" aria-label="Leader terms" mt="xs">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Token</Table.Th>
          <Table.Th>Owner</Table.Th>
          <Table.Th>Began</Table.Th>
          <Table.Th>Ended</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {terms.slice(0, 5).map((t) => (
          <Table.Tr key={t.fencing_token}>
            <Table.Td>{t.fencing_token}</Table.Td>
            <Table.Td style={{ wordBreak: 'break-all' }}>{t.owner}</Table.Td>
            <Table.Td>
              <RelativeTime iso={t.started_at} now={now} />
            </Table.Td>
            <Table.Td>
              {t.ended_at ? (
                <>
                  <RelativeTime iso={t.ended_at} now={now} />
                  {t.end_reason && (
                    <Text span size="xs" c="dimmed" display="block">
                      {t.end_reason}
                    </Text>
                  )}
                </>
              ) : (
                'leading'
              )}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** When the lease's term began, from the audit trail: the last failover (or the first election). */
function currentTermStart(leader: NonNullable<Stats['leader']>, terms: Terms | undefined) {
  return terms?.find((t) => t.fencing_token === leader.fencing_token)?.started_at ?? null;
}

export function LeaderPanel({ leader, terms }: { leader: Stats['leader']; terms?: Terms }) {
  const now = useNow();
  if (!leader) {
    return (
      <Stack gap={4}>
        <Text className="cp-warning-text" role="status">
          No leader holds the lease: schedules are not firing until one is elected.
        </Text>
        {terms && <LeaderTerms terms={terms} now={now} />}
      </Stack>
    );
  }
  const left = new Date(leader.expires_at).getTime() - now;
  const since = currentTermStart(leader, terms);
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
            <Table.Th>Leading since</Table.Th>
            <Table.Td data-testid="leading-since">{since ? <RelativeTime iso={since} now={now} /> : terms ? 'before the audit trail\'s newest terms' : '…'}</Table.Td>
          </Table.Tr>
        </Table.Tbody>
      </Table>
      {terms && <LeaderTerms terms={terms} now={now} />}
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
