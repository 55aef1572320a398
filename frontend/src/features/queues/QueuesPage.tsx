import { Badge, Button, Group, Stack, Table, Text } from '@mantine/core';
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
import { useUrlFilters } from '../../lib/search-params';
import { useProjectScope } from '../../lib/project-scope';
import { PauseQueueButton, QueueLimitsButton } from './QueueDialogs';
import { matchesQueue } from './queue-filter';
import { queueKey, useQueueHistory, type QueueSamples } from './queue-history';
import { Sparkline } from './Sparkline';
import { SearchInput } from '../../components/SearchInput';

const limitText = (value: number | null, unit = '') => (value == null ? 'unlimited' : `${value}${unit}`);

function QueueState({ queue }: { queue: Queue }) {
  if (!queue.paused) return <Badge color="green">active</Badge>;
  return (
    <Stack gap={2}>
      <Badge color="yellow">paused</Badge>
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

function QueueRow({ queue, samples, showProject, numbers }: { queue: Queue; samples?: QueueSamples; showProject: boolean; numbers?: QueueNumbers | null }) {
  const label = `${queue.project}/${queue.name}`;
  const jobsLink = `/jobs?project=${encodeURIComponent(queue.project)}&queue=${encodeURIComponent(queue.name)}`;
  const saturated = queue.concurrency_limit != null && queue.running >= queue.concurrency_limit;
  return (
    <Table.Tr data-queue={label}>
      {showProject && <Table.Td>{queue.project}</Table.Td>}
      <Table.Td>
        <Link to={jobsLink}>{queue.name}</Link>
      </Table.Td>
      <Table.Td>
        <QueueState queue={queue} />
      </Table.Td>
      <Table.Td>
        <Group gap="xs" wrap="nowrap">
          <Sparkline values={samples?.pending ?? [queue.pending]} label={`Pending in ${label}: ${queue.pending}`} />
          <Text size="sm" data-testid="pending">
            {queue.pending}
          </Text>
        </Group>
      </Table.Td>
      <Table.Td>
        <Group gap="xs" wrap="nowrap">
          <Sparkline values={samples?.running ?? [queue.running]} label={`Running in ${label}: ${queue.running}`} color="var(--mantine-color-teal-7)" />
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
        <Text size="xs">concurrency {limitText(queue.concurrency_limit)}</Text>
        <Text size="xs">per key {limitText(queue.per_key_limit)}</Text>
        <Text size="xs">rate {limitText(queue.rate_limit_per_second, '/s')}</Text>
      </Table.Td>
      <Table.Td>
        <Group gap="xs" wrap="nowrap">
          <PauseQueueButton queue={queue} />
          <QueueLimitsButton queue={queue} />
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}

/** Every queue of the chosen project(s): depth and running over the last polls, pause/resume
 * with a reason (OPERATOR), limits (ADMIN). A queue appears once a job, a schedule or a pause
 * names it. */
export function QueuesPage() {
  const polling = usePolling(2000);
  const queues = useQueues(polling.refetchInterval);
  const history = useQueueHistory(queues.data, queues.dataUpdatedAt);
  const windows = useWindows(polling.refetchInterval);
  const numbersOf = (q: Queue): QueueNumbers | null | undefined =>
    windows.data ? windows.data.queues.find((w) => w.project === q.project && w.queue === q.name) : windows.isError ? undefined : null;
  const { project } = useProjectScope();
  const { params, set } = useUrlFilters();
  const filter = { queue: params.get('queue'), q: params.get('q') };
  const all = queues.data ?? [];
  const rows = all.filter((q) => matchesQueue(q, filter));
  const showProject = !project;
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
        <Table.ScrollContainer minWidth={860} tabIndex={0} aria-label="Queues (scrollable)">
          <Table striped withTableBorder fz="sm" aria-label="Queues">
            <Table.Thead>
              <Table.Tr>
                {showProject && <Table.Th>Project</Table.Th>}
                <Table.Th>Queue</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Pending</Table.Th>
                <Table.Th>Running</Table.Th>
                <Table.Th>Last hour</Table.Th>
                <Table.Th>Limits</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((q) => (
                <QueueRow key={queueKey(q)} queue={q} samples={history.get(queueKey(q))} showProject={showProject} numbers={numbersOf(q)} />
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
    </Stack>
  );
}
