import { Alert, Anchor, Box, Stack, Text } from '@mantine/core';
import { lazy, Suspense, useLayoutEffect } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { listJobsQueryOptions } from '../../api/queries/list-jobs';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { usePolling } from '../../lib/polling';
import { roleFor } from '../../lib/roles';
import { useSession } from '../../lib/session';
import { formatExact } from '../../lib/time';
import { useStats } from './api/get-stats';
import { windowsQueryOptions } from '../../api/queries/get-stats-windows';
import { useAfterFirstPaint } from '../../lib/after-first-paint';
import { Section } from './Section';
import { StatusCounts } from './StatusCounts';
import { FailingChannels } from './FailingChannels';

// Everything below the first frame is one chunk, loaded when that frame is painted (DashboardPanels.tsx).
const panels = () => import('./DashboardPanels');
const PollingPicker = lazy(async () => ({ default: (await panels()).PollingPicker }));
const PausedQueues = lazy(async () => ({ default: (await panels()).PausedQueues }));
const NeedsAttention = lazy(async () => ({ default: (await panels()).NeedsAttention }));
const StatsPanels = lazy(async () => ({ default: (await panels()).StatsPanels }));
const DeadJobs = lazy(async () => ({ default: (await panels()).DeadJobs }));

/** A panel's place while it loads: its loader, as before its data came. */
function Pending() {
  return (
    <QueryState isPending error={null}>
      {null}
    </QueryState>
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
        {/* Its height while it is not there, so the page does not move when it comes (it wraps below the heading on a phone). */}
        {rest ? (
          <Suspense fallback={<Box h={31} />}>
            <PollingPicker
              choice={polling.choice}
              onChange={polling.setChoice}
              visible={polling.visible}
              failing={failing}
              updatedAt={stats.dataUpdatedAt}
            />
          </Suspense>
        ) : (
          <Box h={31} />
        )}
      </PageHeader>
      {rest && (
        <Suspense fallback={null}>
          <PausedQueues refetchInterval={polling.refetchInterval} />
        </Suspense>
      )}
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
          <Suspense fallback={<Pending />}>
            <NeedsAttention refetchInterval={polling.refetchInterval} />
          </Suspense>
        ) : (
          <Pending />
        )}
      </Section>
      <QueryState isPending={stats.isPending} onRetry={() => stats.refetch()} error={stats.data ? null : stats.error}>
        {stats.data && (
          <Box style={staleStyle} aria-busy={failing} data-stale={failing || undefined}>
            <Stack>
              <StatusCounts counts={stats.data.jobs_by_status} deliveries={stats.data.deliveries_by_status} heldByWorkers={stats.data.workers.reduce((n, w) => n + w.running, 0)} windows={windows.data} />
              {rest && (
                <Suspense fallback={null}>
                  <StatsPanels stats={stats.data} windows={windows} />
                </Suspense>
              )}
            </Stack>
          </Box>
        )}
      </QueryState>
      {rest && (
        <Section title="Failures needing attention">
          <Suspense fallback={<Pending />}>
            <DeadJobs jobs={failures.data?.items} isPending={failures.isPending} error={failures.error} onRetry={() => void failures.refetch()} style={staleStyle} />
          </Suspense>
        </Section>
      )}
    </Stack>
  );
}
