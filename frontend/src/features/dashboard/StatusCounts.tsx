import { Anchor, Paper, SimpleGrid, Text } from '@mantine/core';
import { Link } from 'react-router';
import { JOB_STATUSES, type StatsWindows } from '../../api/types';
import { windowCounts } from '../../lib/windows';

/** `heldByWorkers`: what the live workers said they run at their last heartbeat. RUNNING counts
 * attempts in the database, live; a worker reports its count at each heartbeat (every 5 s by default), and one that died keeps
 * its attempt RUNNING until the lease expires and the watchdog reclaims it. So RUNNING can
 * exceed the workers' total for a while, truthfully: the card says so instead of looking wrong. */
/** `deliveries`: the notification deliveries among `counts` (GET /stats deliveries_by_status). They are shown apart: 685 dead
 * deliveries to one broken webhook must not read as 685 failures of the operator's work (issue 45). */
/** `windows`: GET /stats/windows, for the last hour and 24 hours under the all-time count of a finished status (issue 45). */
export function StatusCounts({ counts: all, heldByWorkers, deliveries = {}, windows }: { counts: Record<string, number>; heldByWorkers?: number; deliveries?: Record<string, number>; windows?: StatsWindows }) {
  const counts = Object.fromEntries(Object.entries(all).map(([s, n]) => [s, Math.max(0, n - (deliveries[s] ?? 0))]));
  const running = counts.RUNNING ?? 0;
  const unaccounted = heldByWorkers !== undefined && running > heldByWorkers;
  return (
    <SimpleGrid cols={{ base: 2, sm: 3, lg: 6 }}>
      {JOB_STATUSES.map((s) => (
        <Paper key={s} withBorder p="sm">
          <Anchor component={Link} to={`/jobs?status=${s}`} size="xs" c="dimmed" tt="uppercase">
            {s}
          </Anchor>
          <Text size="xl" fw={700} aria-label={`${s} jobs`}>
            {counts[s] ?? 0}
          </Text>
          {(() => {
            const w = windowCounts(windows, s);
            return (
              w && (
                <Text size="xs" data-testid={`window-${s}`} title="The operator's jobs (deliveries apart), in the last hour and the last 24 hours">
                  {w.hour} last hour · {w.day} in 24 h
                </Text>
              )
            );
          })()}
          {(deliveries[s] ?? 0) > 0 && (
            <Anchor component={Link} to={`/jobs?status=${s}&handler=notification.deliver`} size="xs" data-testid={`deliveries-${s}`}>
              +{deliveries[s]} notification deliveries
            </Anchor>
          )}
          {s === 'RUNNING' && unaccounted && (
            <Text size="xs" c="dimmed" data-testid="running-hint">
              live workers report {heldByWorkers} (as of their last heartbeat, every few seconds; a dead worker&apos;s attempt stays RUNNING until its lease expires)
            </Text>
          )}
        </Paper>
      ))}
    </SimpleGrid>
  );
}
