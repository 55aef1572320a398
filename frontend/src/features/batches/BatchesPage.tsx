import { Anchor, Stack, Text } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { Link } from 'react-router';
import type { Batch } from '../../api/types';
import { CursorPager } from '../../components/CursorPager';
import { DataTable } from '../../components/DataTable';
import { PageHeader } from '../../components/PageHeader';
import { PollingPicker } from '../../components/PollingPicker';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { usePolling } from '../../lib/polling';
import { useProjectScope } from '../../lib/project-scope';
import { useUrlPaging } from '../../lib/search-params';
import { useBatches } from './api/list-batches';
import { BatchProgress, BatchStateBadge } from './BatchState';

const columns = (showProject: boolean): ColumnDef<Batch>[] => [
  {
    header: 'Batch',
    cell: ({ row }) => (
      <Anchor component={Link} to={`/batches/${row.original.id}`}>
        #{row.original.id}
      </Anchor>
    ),
  },
  ...(showProject ? [{ header: 'Project', accessorKey: 'project' } as ColumnDef<Batch>] : []),
  { header: 'State', cell: ({ row }) => <BatchStateBadge state={row.original.state} /> },
  { header: 'Finished', cell: ({ row }) => <BatchProgress batch={row.original} /> },
  {
    header: 'Counts',
    cell: ({ row }) => {
      const b = row.original;
      return (
        <Text size="xs">
          {b.waiting} waiting · {b.pending} pending · {b.running} running · {b.succeeded} succeeded · {b.dead} dead · {b.cancelled} cancelled
        </Text>
      );
    },
  },
  {
    header: 'Callback',
    cell: ({ row }) =>
      row.original.callback_job_id ? (
        <Anchor component={Link} to={`/jobs/${row.original.callback_job_id}`}>
          job #{row.original.callback_job_id}
        </Anchor>
      ) : (
        '—'
      ),
  },
  { header: 'Created by', cell: ({ row }) => row.original.created_by ?? '—' },
  { header: 'Created', cell: ({ row }) => <RelativeTime iso={row.original.created_at} /> },
];

/** Every batch of the chosen project(s), newest first, live: counts per status and state. */
export function BatchesPage() {
  const polling = usePolling(2000);
  const paging = useUrlPaging();
  const batches = useBatches(paging.cursor, polling.refetchInterval);
  const { project } = useProjectScope();
  const rows = batches.data?.items ?? [];
  return (
    <Stack>
      <PageHeader title="Batches">
        <PollingPicker choice={polling.choice} onChange={polling.setChoice} visible={polling.visible} failing={batches.isError} updatedAt={batches.dataUpdatedAt} />
      </PageHeader>
      <Text size="sm" c="dimmed">
        Jobs created together by <code>POST /api/v1/batches</code> or <code>cronplane batches create</code>, each with an optional callback that runs once all of
        them have finished.
      </Text>
      <QueryState
        isPending={batches.isPending}
        onRetry={() => batches.refetch()}
        error={batches.error}
        isEmpty={rows.length === 0 && !paging.cursor}
        empty="No batches yet."
      >
        <DataTable data={rows} columns={columns(!project)} label="Batches" loading={batches.isPlaceholderData} />
        <CursorPager paging={paging} nextCursor={batches.data?.next_cursor} />
      </QueryState>
    </Stack>
  );
}
