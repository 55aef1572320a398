import { Anchor, Code, Grid, Paper, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import type { ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import type { Batch, Job } from '../../api/types';
import { CursorPager } from '../../components/CursorPager';
import { DataTable } from '../../components/DataTable';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { useUrlPaging } from '../../lib/search-params';
import { useBatch } from './api/get-batch';
import { useBatchJobs } from './api/list-batch-jobs';
import { BatchProgress, BatchStateBadge } from './BatchState';

const COUNTS = ['waiting', 'pending', 'running', 'succeeded', 'dead', 'cancelled'] as const;

const jobColumns: ColumnDef<Job>[] = [
  {
    header: 'Job',
    cell: ({ row }) => (
      <Anchor component={Link} to={`/jobs/${row.original.id}`}>
        #{row.original.id}
      </Anchor>
    ),
  },
  { header: 'Status', cell: ({ row }) => <StatusBadge status={row.original.status} /> },
  { header: 'Handler', cell: ({ row }) => <Code>{row.original.handler}</Code> },
  { header: 'Attempts', cell: ({ row }) => `${row.original.attempt_count}/${row.original.max_attempts}` },
  { header: 'Finished', cell: ({ row }) => <RelativeTime iso={row.original.finished_at} /> },
];

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th w={140}>{label}</Table.Th>
      <Table.Td>{children}</Table.Td>
    </Table.Tr>
  );
}

function Counts({ batch }: { batch: Batch }) {
  return (
    <SimpleGrid cols={{ base: 3, sm: 6 }}>
      {COUNTS.map((name) => (
        <Paper key={name} withBorder p="xs">
          <Text size="xs" c="dimmed" tt="uppercase">
            {name}
          </Text>
          <Text size="lg" fw={700} aria-label={`${name} jobs`}>
            {batch[name]}
          </Text>
        </Paper>
      ))}
    </SimpleGrid>
  );
}

/** One batch: its state and counts (watched while it runs), its callback, and its jobs. */
export function BatchDetailPage() {
  const id = Number(useParams().id);
  const batch = useBatch(id);
  const paging = useUrlPaging('jobs_');
  const b = batch.data;
  const jobs = useBatchJobs(id, paging.cursor, b && b.state === 'running' ? 2000 : false);
  return (
    <Stack>
      <PageHeader title={`Batch #${id}`} />
      <QueryState isPending={batch.isPending} onRetry={() => batch.refetch()} error={batch.error}>
        {b && (
          <Grid>
            <Grid.Col span={{ base: 12, md: 5 }}>
              <Paper withBorder p="md">
                <Table variant="vertical" fz="sm" aria-label="Batch fields">
                  <Table.Tbody>
                    <Row label="State">
                      <BatchStateBadge state={b.state} />
                    </Row>
                    <Row label="Finished">
                      <BatchProgress batch={b} />
                    </Row>
                    <Row label="Project">{b.project}</Row>
                    <Row label="Callback">
                      {b.callback_job_id ? (
                        <Anchor component={Link} to={`/jobs/${b.callback_job_id}`}>
                          job #{b.callback_job_id}
                        </Anchor>
                      ) : (
                        'none'
                      )}
                    </Row>
                    <Row label="Created">
                      <RelativeTime iso={b.created_at} /> by {b.created_by ?? '—'}
                    </Row>
                    <Row label="All finished">
                      <RelativeTime iso={b.finished_at} />
                    </Row>
                  </Table.Tbody>
                </Table>
              </Paper>
            </Grid.Col>
            <Grid.Col span={{ base: 12, md: 7 }}>
              <Counts batch={b} />
            </Grid.Col>
          </Grid>
        )}
      </QueryState>
      <Title order={2} size="h4">
        Jobs
      </Title>
      <QueryState isPending={jobs.isPending} onRetry={() => jobs.refetch()} error={jobs.error} isEmpty={(jobs.data?.items.length ?? 0) === 0} empty="No jobs.">
        <DataTable data={jobs.data?.items ?? []} columns={jobColumns} label="Jobs of the batch" loading={jobs.isPlaceholderData} />
        <CursorPager paging={paging} nextCursor={jobs.data?.next_cursor} />
      </QueryState>
    </Stack>
  );
}
