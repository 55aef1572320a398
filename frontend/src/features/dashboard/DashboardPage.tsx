import { Alert, Anchor, Box, Grid, Loader, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { lazy, Suspense, useLayoutEffect, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { listJobsQueryOptions } from '../../api/queries/list-jobs';
import { PageHeader } from '../../components/PageHeader';
import { PollingPicker } from '../../components/PollingPicker';
import { PausedQueues } from './PausedQueues';
import { QueryState } from '../../components/QueryState';
import { errorHeadline } from '../../components/FailureText';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { usePolling } from '../../lib/polling';
import { roleFor } from '../../lib/roles';
import { useSession } from '../../lib/session';
import { formatExact } from '../../lib/time';
import { useStats } from './api/get-stats';
import { windowsQueryOptions } from '../../api/queries/get-stats-windows';
import { useAfterFirstPaint } from '../../lib/after-first-paint';
import { FailureRates } from './FailureRates';
import { QueueLatency } from './QueueLatency';
import { LeaderPanel, WorkersTable } from './LeaderPanel';
import { NeedsAttention } from './NeedsAttention';
import { StatusCounts } from './StatusCounts';
import { FailingChannels } from './FailingChannels';

// recharts is 290 KB of the dashboard's 440: loaded on its own, after the page (and its heading)
// is on screen, so a slow network shows the numbers first (bench/RESULTS.md, issue 23).
const ThroughputChart = lazy(async () => ({ default: (await import('./ThroughputChart')).ThroughputChart }));
const HourlyThroughputChart = lazy(async () => ({ default: (await import('./ThroughputChart')).HourlyThroughputChart }));

/** The chart's place while recharts loads: its height, so nothing below it jumps. */
function ChartPlaceholder() {
  return (
    <Box h={244} style={{ display: 'flex', alignItems: 'center', justifyContent: 'center' }}>
      <Loader size="sm" aria-label="Loading chart" />
    </Box>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Paper withBorder p="md" component="section" aria-label={title}>
      <Title order={2} size="h4" mb="sm">
        {title}
      </Title>
      {children}
    </Paper>
  );
}

export function DashboardPage() {
  // When React has put the page in the document (before layout and paint): splits the time from
  // the entry's download to the painted heading in bench/console.py --waterfall.
  useLayoutEffect(() => {
    performance.mark('cp:dashboard-committed');
  }, []);
  const { can } = useSession();
  const polling = usePolling();
  const stats = useStats(polling.refetchInterval);
  // The first render is the heading and the status cards, what the reader waits for; the rest of
  // the page (the panels, their requests, the refresh control) renders once that frame is painted.
  // On slow 4G with 4× CPU every panel rendered before the numbers could be painted, and the
  // refresh control's SegmentedControl sets state from its refs while React commits, which made
  // React run every effect of the first render before the paint (bench/RESULTS.md, issue 45).
  const rest = useAfterFirstPaint();
  // The time windows (GET /stats/windows): a second request, polled at most every 30 s; the
  // status cards do not wait for it (their all-time numbers come first).
  const windows = useQuery({ ...windowsQueryOptions(polling.refetchInterval), enabled: rest });
  const failures = useQuery({ ...listJobsQueryOptions({ status: ['DEAD'], limit: 10, exclude_trigger: ['notification'] }, polling.refetchInterval), enabled: rest });
  const failing = stats.isError || failures.isError;
  // Numbers from before a failed poll stay visible for orientation but are dimmed and labelled.
  const staleStyle = failing ? { opacity: 0.45 } : undefined;
  // Every role sees that an experiment runs (from /stats); its parameters are ADMIN-only.
  const activeChaos = stats.data?.chaos ?? [];

  return (
    <Stack>
      <PageHeader title="Dashboard">
        {rest ? (
          <PollingPicker
            choice={polling.choice}
            onChange={polling.setChoice}
            visible={polling.visible}
            failing={failing}
            updatedAt={stats.dataUpdatedAt}
          />
        ) : (
          // Its height, so the page does not move when it comes (it wraps below the heading on a phone).
          <Box h={31} />
        )}
      </PageHeader>
      {rest && <PausedQueues refetchInterval={polling.refetchInterval} />}
      {activeChaos.length > 0 && (
        <Alert color="grape" title="Chaos experiment running" role="status">
          {activeChaos.map((c) => (
            <Text key={c.id} size="sm">
              {c.kind} until {formatExact(c.expires_at)}
              {can(roleFor('listChaos')) && (
                <>
                  {' '}—{' '}
                  <Anchor component={Link} to="/chaos">
                    manage
                  </Anchor>
                </>
              )}
            </Text>
          ))}
        </Alert>
      )}
      {stats.data && stats.data.failing_channels.length > 0 && <FailingChannels channels={stats.data.failing_channels} canOpen={can(roleFor('listNotificationChannels'))} />}
      <Section title="Needs attention">
        {rest ? (
          <NeedsAttention refetchInterval={polling.refetchInterval} />
        ) : (
          <QueryState isPending error={null}>
            {null}
          </QueryState>
        )}
      </Section>
      <QueryState isPending={stats.isPending} onRetry={() => stats.refetch()} error={stats.data ? null : stats.error}>
        {stats.data && (
          <Box style={staleStyle} aria-busy={failing} data-stale={failing || undefined}>
            <Stack>
              <StatusCounts counts={stats.data.jobs_by_status} deliveries={stats.data.deliveries_by_status} heldByWorkers={stats.data.workers.reduce((n, w) => n + w.running, 0)} windows={windows.data} />
              {rest && (
                <>
                  <Grid>
                    <Grid.Col span={{ base: 12, md: 6 }}>
                      <Section title="Throughput (24 hours)">
                        <QueryState isPending={windows.isPending} onRetry={() => windows.refetch()} error={windows.data ? null : windows.error}>
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
                          <ThroughputChart points={stats.data.throughput} />
                        </Suspense>
                      </Section>
                    </Grid.Col>
                  </Grid>
                  <Section title="Failure rate (24 hours)">
                    <QueryState isPending={windows.isPending} onRetry={() => windows.refetch()} error={windows.data ? null : windows.error}>
                      {windows.data && <FailureRates windows={windows.data} />}
                    </QueryState>
                  </Section>
                  <Section title="Queue latency">
                    <QueryState isPending={windows.isPending} onRetry={() => windows.refetch()} error={windows.data ? null : windows.error}>
                      {windows.data && <QueueLatency windows={windows.data} />}
                    </QueryState>
                  </Section>
                  <Grid>
                    <Grid.Col span={{ base: 12, md: 5 }}>
                      <Section title="Leader">
                        <LeaderPanel leader={stats.data.leader} terms={windows.data?.leader_terms} />
                      </Section>
                    </Grid.Col>
                    <Grid.Col span={{ base: 12, md: 7 }}>
                      <Section title="Workers">
                        <WorkersTable workers={stats.data.workers} />
                      </Section>
                    </Grid.Col>
                  </Grid>
                </>
              )}
            </Stack>
          </Box>
        )}
      </QueryState>
      {rest && (
        <Section title="Failures needing attention">
          <QueryState
            isPending={failures.isPending}
            onRetry={() => failures.refetch()}
            error={failures.data ? null : failures.error}
            isEmpty={failures.data?.items.length === 0}
            empty="No dead jobs."
          >
            <Table fz="sm" style={staleStyle} aria-label="Dead jobs">
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
                {failures.data?.items.map((j) => (
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
          </QueryState>
        </Section>
      )}
    </Stack>
  );
}
