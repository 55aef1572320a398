import { Anchor, Box, Grid, Loader, Table, Text } from '@mantine/core';
import { lazy, Suspense, type CSSProperties } from 'react';
import { Link } from 'react-router';
import type { Job, Stats, StatsWindows } from '../../api/types';
import { errorHeadline } from '../../components/FailureText';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { FailureRates } from './FailureRates';
import { LeaderPanel, WorkersTable } from './LeaderPanel';
import { QueueLatency } from './QueueLatency';
import { Section } from './Section';

/**
 * What the dashboard renders once its first frame (the heading and the status cards) is painted:
 * a chunk of its own, loaded then (DashboardPage.tsx). Out of the entry script, its components
 * (Table with its ScrollArea, Grid, SegmentedControl and the floating indicator of the refresh
 * control) are neither downloaded nor evaluated before the numbers on a slow phone (issue 45,
 * bench/RESULTS.md).
 */
export { PollingPicker } from '../../components/PollingPicker';
export { NeedsAttention } from './NeedsAttention';
export { PausedQueues } from './PausedQueues';

// recharts is 290 KB of the dashboard's 440: loaded on its own, after the page (and its heading)
// is on screen, so a slow network shows the numbers first (bench/RESULTS.md, issue 23).
const ThroughputChart = lazy(async () => ({ default: (await import('./ThroughputChart')).ThroughputChart }));
const HourlyThroughputChart = lazy(async () => ({ default: (await import('./ThroughputChart')).HourlyThroughputChart }));

/** The chart's place while recharts loads: its height, so nothing below it jumps. */
function ChartPlaceholder() {
  return (
    <Box h={244} style={{ display: 'flex', alignItems: 'center', justifyContent: 'center' }}>
      <Loader size="sm" role="status" aria-label="Loading chart" />
    </Box>
  );
}

interface WindowsQuery {
  data?: StatsWindows;
  isPending: boolean;
  error: Error | null;
  refetch: () => unknown;
}

/** Below the status cards: the charts, failure rates, queue latency, leader and workers. */
export function StatsPanels({ stats, windows }: { stats: Stats; windows: WindowsQuery }) {
  const windowsState = { isPending: windows.isPending, onRetry: () => void windows.refetch(), error: windows.data ? null : windows.error };
  return (
    <>
      <Grid>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Section title="Throughput (24 hours)">
            <QueryState {...windowsState}>
              {windows.data && (
                <Suspense fallback={<ChartPlaceholder />}>
                  <HourlyThroughputChart points={windows.data.throughput} />
                </Suspense>
              )}
            </QueryState>
          </Section>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Section title="Throughput (last hour)">
            <Suspense fallback={<ChartPlaceholder />}>
              <ThroughputChart points={stats.throughput} />
            </Suspense>
          </Section>
        </Grid.Col>
      </Grid>
      <Section title="Failure rate (24 hours)">
        <QueryState {...windowsState}>
          {windows.data && <FailureRates windows={windows.data} />}
        </QueryState>
      </Section>
      <Section title="Queue latency">
        <QueryState {...windowsState}>
          {windows.data && <QueueLatency windows={windows.data} />}
        </QueryState>
      </Section>
      <Grid>
        <Grid.Col span={{ base: 12, md: 5 }}>
          <Section title="Leader">
            <LeaderPanel leader={stats.leader} terms={windows.data?.leader_terms} />
          </Section>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 7 }}>
          <Section title="Workers">
            <WorkersTable workers={stats.workers} />
          </Section>
        </Grid.Col>
      </Grid>
    </>
  );
}

/** The newest dead jobs (notification deliveries left out), each linked to its page. */
export function DeadJobs({ jobs, isPending, error, onRetry, style }: { jobs?: Job[]; isPending: boolean; error: Error | null; onRetry: () => void; style?: CSSProperties }) {
  return (
    <QueryState
      isPending={isPending}
      onRetry={onRetry}
      error={jobs ? null : error}
      isEmpty={jobs?.length === 0}
      empty="No dead jobs."
    >
      {/* In its own focusable, named scroll box: on a phone a bare table scrolls by itself
          (console.css), where the keyboard cannot reach it. */}
      <Table.ScrollContainer type="native" minWidth={560} tabIndex={0} aria-label="Dead jobs (scrollable)">
        <Table fz="sm" style={style} aria-label="Dead jobs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Job</Table.Th>
              <Table.Th>Handler</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Error</Table.Th>
              <Table.Th>Finished</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {jobs?.map((j) => (
              <Table.Tr key={j.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/jobs/${j.id}`}>
                    #{j.id}
                  </Anchor>
                </Table.Td>
                <Table.Td>{j.handler}</Table.Td>
                <Table.Td>
                  <StatusBadge status={j.status} />
                </Table.Td>
                <Table.Td maw={360}>
                  <Text size="sm" lineClamp={2} title={j.error ? errorHeadline(j.error) : undefined}>
                    {j.error ? errorHeadline(j.error) : '—'}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <RelativeTime iso={j.finished_at} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </QueryState>
  );
}
