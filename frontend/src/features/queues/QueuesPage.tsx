import { Anchor, Badge, Button, Group, Stack, Table, Text } from '@mantine/core';
import { Link } from 'react-router';
import { useQueues } from '../../api/queries/list-queues';
import { useWindows } from '../../api/queries/get-stats-windows';
import type { Queue, StatsWindows } from '../../api/types';
import { formatLag, formatRate } from '../../lib/windows';
import { FirstStep } from '../../components/FirstStep';
import { NoMatch } from '../../components/NoMatch';
import { PageHeader } from '../../components/PageHeader';
import { PollingPicker } from '../../components/PollingPicker';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { usePolling } from '../../lib/polling';
import { formatExact } from '../../lib/time';
import { isReadOnly } from '../../lib/roles';
import { useSession } from '../../lib/session';
import { useUrlFilters } from '../../lib/search-params';
import { useProjectScope } from '../../lib/project-scope';
import { PauseQueueButton, QueueLimitsButton } from './QueueDialogs';
import { matchesQueue } from './queue-filter';
import { describeLine, queueKey, queueLines, type QueueLines } from './queue-history';
import { useQueueHistory } from './api/list-queue-history';
import { Sparkline } from './Sparkline';
import { SearchInput } from '../../components/SearchInput';

// The badge look of schedule states (outline, black/white text), not a solid block of green.
const stateBadge = (state: 'active' | 'paused') => (
  <Badge color={state === 'active' ? 'green' : 'yellow'} variant="outline" className="cp-state-badge" data-state={state}>
    {state}
  </Badge>
);

/** The queue's limits, "—" for an unlimited one: most queues have none, and three lines of
 * "unlimited" on every row buried the one that has (review 2026-12-05 §5.8). */
function Limits({ queue }: { queue: Queue }) {
  const limits: [string, number | null, string][] = [
    ['concurrency', queue.concurrency_limit, ''],
    ['per key', queue.per_key_limit, ''],
    ['rate', queue.rate_limit_per_second, '/s'],
  ];
  if (limits.every(([, value]) => value == null)) {
    return (
      <Text size="xs" data-testid="limits" title="No limits">
        —
      </Text>
    );
  }
  return (
    <Text size="xs" data-testid="limits">
      {limits.map(([name, value, unit]) => `${name} ${value == null ? '—' : `${value}${unit}`}`).join(' · ')}
    </Text>
  );
}

/** How long the queue's head has waited for a worker: the age of its oldest due PENDING job
 * (GET /queues), there on arrival; a queue whose pending jobs are all due later has waited for
 * nothing. */
export function OldestWait({ queue, now = Date.now() }: { queue: Pick<Queue, 'oldest_due_at'>; now?: number }) {
  if (!queue.oldest_due_at) return null;
  const seconds = Math.max(0, (now - new Date(queue.oldest_due_at).getTime()) / 1000);
  return (
    <Text size="xs" data-testid="oldest-wait" title={`The oldest due job has waited since ${formatExact(queue.oldest_due_at)}`}>
      oldest waits {formatLag(seconds)}
    </Text>
  );
}

function QueueState({ queue }: { queue: Queue }) {
  if (!queue.paused) return stateBadge('active');
  return (
    <Stack gap={2}>
      {stateBadge('paused')}
      <Text size="xs">
        by {queue.paused_by ?? 'unknown'} <RelativeTime iso={queue.paused_at} />
      </Text>
      {queue.paused_reason && <Text size="xs">“{queue.paused_reason}”</Text>}
    </Stack>
  );
}

type QueueNumbers = StatsWindows['queues'][number];

/** The queue's last hour from GET /stats/windows (server-side buckets): there on arrival, unlike the sparklines. */
function LastHour({ numbers, label }: { numbers?: QueueNumbers | null; label: string }) {
  if (numbers === null) return <Text size="xs">…</Text>;
  if (!numbers || numbers.day.claimed + numbers.day.succeeded + numbers.day.dead === 0) {
    return (
      <Text size="xs" data-testid="last-hour">
        nothing in 24 h
      </Text>
    );
  }
  const h = numbers.hour;
  return (
    <Stack gap={0} data-testid="last-hour" aria-label={`Last hour in ${label}`}>
      <Text size="xs">
        {h.succeeded} succeeded · {h.dead} dead
      </Text>
      <Text size="xs">
        claim lag {formatLag(h.claim_lag_mean_seconds)}
        {h.claim_lag_max_seconds != null && ` (max ${formatLag(h.claim_lag_max_seconds)})`}
      </Text>
      <Text size="xs">24 h: failure rate {formatRate(numbers.day.failure_rate)}</Text>
    </Stack>
  );
}

const jobsLink = (queue: Queue) => `/jobs?project=${encodeURIComponent(queue.project)}&queue=${encodeURIComponent(queue.name)}`;

// The console's link look (Anchor), not the browser's underlined blue (purple once visited).
const QueueName = ({ queue }: { queue: Queue }) => (
  <Anchor component={Link} to={jobsLink(queue)} fw={600} size="sm">
    {queue.name}
  </Anchor>
);

function QueueRow({ queue, lines, showProject, numbers, actions }: { queue: Queue; lines?: QueueLines; showProject: boolean; numbers?: QueueNumbers | null; actions: boolean }) {
  const label = `${queue.project}/${queue.name}`;
  const saturated = queue.concurrency_limit != null && queue.running >= queue.concurrency_limit;
  return (
    <Table.Tr data-queue={label}>
      {showProject && <Table.Td>{queue.project}</Table.Td>}
      <Table.Td>
        <QueueName queue={queue} />
      </Table.Td>
      <Table.Td>
        <QueueState queue={queue} />
      </Table.Td>
      <Table.Td>
        <Group gap="xs" wrap="nowrap">
          {/* Due jobs per minute from the leader's samples; the number is every PENDING job. */}
          <Sparkline values={lines?.ready.values ?? [queue.pending]} label={lines?.ready.sampled ? describeLine(`Ready in ${label}`, lines.ready, lines.ready.values.at(-1) ?? 0) : `Pending in ${label}: ${queue.pending}`} />
          <Stack gap={0}>
            <Text size="sm" data-testid="pending">
              {queue.pending}
            </Text>
            <OldestWait queue={queue} />
            {lines?.latency.sampled && Math.max(...lines.latency.values) > 0 && (
              <Sparkline values={lines.latency.values} label={`Oldest due wait in ${label}, peak ${formatLag(Math.max(...lines.latency.values))} over the last ${lines.latency.values.length} min`} color="var(--mantine-color-orange-7)" />
            )}
          </Stack>
        </Group>
      </Table.Td>
      <Table.Td>
        <Group gap="xs" wrap="nowrap">
          <Sparkline values={lines?.running.values ?? [queue.running]} label={describeLine(`Running in ${label}`, lines?.running ?? { values: [queue.running], sampled: false }, queue.running)} color="var(--mantine-color-teal-7)" />
          <Text size="sm" data-testid="running">
            {queue.running}
          </Text>
          {saturated && (
            <Badge size="xs" color="orange">
              at limit
            </Badge>
          )}
        </Group>
      </Table.Td>
      <Table.Td>
        <LastHour numbers={numbers} label={label} />
      </Table.Td>
      <Table.Td>
        <Limits queue={queue} />
      </Table.Td>
      {actions && (
        // Sticky at the scroller's right edge: on a phone the wide table scrolled Pause/Resume
        // off-screen (review 2026-12-05 §5.8). One tree for every width, so a dialog opened
        // from a row survives a rotation or a resize.
        <Table.Td className="cp-sticky-actions">
          <Group gap="xs" wrap="nowrap">
            <PauseQueueButton queue={queue} />
            <QueueLimitsButton queue={queue} />
          </Group>
        </Table.Td>
      )}
    </Table.Tr>
  );
}

/** Every queue of the chosen project(s): depth, running and wait over the last hour (the leader's
 * per-minute samples, there on arrival), pause/resume
 * with a reason (OPERATOR), limits (ADMIN). A queue appears once a job, a schedule or a pause
 * names it. */
export function QueuesPage() {
  const polling = usePolling(2000);
  const queues = useQueues(polling.refetchInterval);
  const history = useQueueHistory(polling.refetchInterval);
  const lines = queueLines(history.data, queues.data ?? []);
  const windows = useWindows(polling.refetchInterval);
  const numbersOf = (q: Queue): QueueNumbers | null | undefined =>
    windows.data ? windows.data.queues.find((w) => w.project === q.project && w.queue === q.name) : windows.isError ? undefined : null;
  const { project } = useProjectScope();
  const { params, set } = useUrlFilters();
  const filter = { queue: params.get('queue'), q: params.get('q') };
  const all = queues.data ?? [];
  const rows = all.filter((q) => matchesQueue(q, filter));
  const showProject = !project;
  // A VIEWER is shown no action buttons (PageHeader says "read-only"): no empty Actions column.
  const actions = !isReadOnly(useSession().can);
  return (
    <Stack>
      <PageHeader title="Queues">
        <PollingPicker choice={polling.choice} onChange={polling.setChoice} visible={polling.visible} failing={queues.isError} updatedAt={queues.dataUpdatedAt} />
      </PageHeader>
      <Group align="flex-end" role="search" aria-label="Queue filters">
        <SearchInput initial={filter.q ?? ''} placeholder="name, project…" onSearch={(q) => set({ q })} />
        {filter.queue && (
          <Group gap="xs" align="center">
            <Text size="sm">
              Only queue <strong>{filter.queue}</strong>
            </Text>
            <Button variant="default" size="xs" onClick={() => set({ queue: null })}>
              Show all queues
            </Button>
          </Group>
        )}
      </Group>
      <QueryState
        isPending={queues.isPending}
        onRetry={() => queues.refetch()}
        error={queues.error}
        isEmpty={rows.length === 0}
        empty={
          all.length ? (
            <NoMatch text="No queue matches these filters." onClear={() => set({ q: null, queue: null })} />
          ) : (
            <FirstStep text="No queues yet: a queue appears once a job or schedule names it." action="Submit a job to a queue" to="/jobs/new" operation="createJob" />
          )
        }
      >
        <Table.ScrollContainer type="native" minWidth={860} tabIndex={0} aria-label="Queues (scrollable)">
          <Table striped withTableBorder fz="sm" aria-label="Queues" className="cp-sticky-table">
            <Table.Thead>
              <Table.Tr>
                {showProject && <Table.Th>Project</Table.Th>}
                <Table.Th>Queue</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Pending</Table.Th>
                <Table.Th>Running</Table.Th>
                <Table.Th>Last hour</Table.Th>
                <Table.Th>Limits</Table.Th>
                {actions && <Table.Th className="cp-sticky-actions">Actions</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((q) => (
                <QueueRow key={queueKey(q)} queue={q} lines={lines.get(queueKey(q))} showProject={showProject} numbers={numbersOf(q)} actions={actions} />
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
    </Stack>
  );
}
