import { Anchor, Group, MultiSelect, Select, Stack, TextInput } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import type { ColumnDef } from '@tanstack/react-table';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useHandlers } from '../../api/queries/list-handlers';
import { useJobs, type JobFilters } from '../../api/queries/list-jobs';
import { JOB_STATUSES, type Job, type JobStatus } from '../../api/types';
import { CursorPager } from '../../components/CursorPager';
import { DataTable } from '../../components/DataTable';
import { GatedButton } from '../../components/GatedButton';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { useUrlFilters } from '../../lib/search-params';

const columns: ColumnDef<Job, unknown>[] = [
  {
    header: 'Job',
    accessorKey: 'id',
    cell: ({ row }) => (
      <Anchor component={Link} to={`/jobs/${row.original.id}`}>
        #{row.original.id}
      </Anchor>
    ),
  },
  { header: 'Handler', accessorKey: 'handler' },
  { header: 'Status', accessorKey: 'status', cell: ({ row }) => <StatusBadge status={row.original.status} /> },
  { header: 'Trigger', accessorKey: 'trigger' },
  {
    header: 'Schedule',
    accessorKey: 'schedule_id',
    cell: ({ row }) =>
      row.original.schedule_id ? (
        <Anchor component={Link} to={`/schedules/${row.original.schedule_id}`}>
          #{row.original.schedule_id}
        </Anchor>
      ) : (
        '—'
      ),
  },
  { header: 'Attempts', cell: ({ row }) => `${row.original.attempt_count} / ${row.original.max_attempts}` },
  { header: 'Created', cell: ({ row }) => <RelativeTime iso={row.original.created_at} /> },
  { header: 'Run at', cell: ({ row }) => <RelativeTime iso={row.original.run_at} /> },
  { header: 'Finished', cell: ({ row }) => <RelativeTime iso={row.original.finished_at} /> },
];

export function JobsPage() {
  const navigate = useNavigate();
  const { params, set } = useUrlFilters();
  const handlers = useHandlers();
  const scheduleId = Number(params.get('schedule_id'));
  const filters: JobFilters = {
    status: params.getAll('status').filter((s): s is JobStatus => (JOB_STATUSES as string[]).includes(s)),
    handler: params.get('handler') ?? undefined,
    schedule_id: Number.isInteger(scheduleId) && scheduleId > 0 ? scheduleId : undefined,
    q: params.get('q') ?? undefined,
    cursor: params.get('cursor') ?? undefined,
  };
  const jobs = useJobs(filters, 5000);
  const [search, setSearch] = useState(filters.q ?? '');
  const pushSearch = useDebouncedCallback((q: string) => set({ q }), 300);
  const [scheduleText, setScheduleText] = useState(params.get('schedule_id') ?? '');
  const pushSchedule = useDebouncedCallback((v: string) => set({ schedule_id: v }), 300);

  return (
    <Stack>
      <PageHeader title="Jobs">
        <GatedButton role="OPERATOR" onClick={() => navigate('/jobs/new')}>
          New ad-hoc job
        </GatedButton>
      </PageHeader>
      <Group align="flex-end" wrap="wrap" role="search" aria-label="Job filters">
        <MultiSelect
          label="Status"
          placeholder={filters.status?.length ? undefined : 'Any'}
          data={JOB_STATUSES}
          value={filters.status ?? []}
          onChange={(v) => set({ status: v })}
          clearable
          w={280}
        />
        <Select
          label="Handler"
          placeholder="Any"
          data={(handlers.data ?? []).map((h) => h.name)}
          value={filters.handler ?? null}
          onChange={(v) => set({ handler: v })}
          clearable
          searchable
          w={200}
        />
        <TextInput
          label="Schedule id"
          inputMode="numeric"
          w={120}
          value={scheduleText}
          onChange={(e) => {
            const v = e.currentTarget.value.replace(/\D/g, '');
            setScheduleText(v);
            pushSchedule(v);
          }}
        />
        <TextInput
          label="Search"
          placeholder="id, handler, key, error…"
          type="search"
          w={240}
          value={search}
          onChange={(e) => {
            setSearch(e.currentTarget.value);
            pushSearch(e.currentTarget.value);
          }}
        />
      </Group>
      <QueryState
        isPending={jobs.isPending}
        error={jobs.error}
        isEmpty={jobs.data?.items.length === 0}
        empty={params.toString() ? 'No jobs match these filters.' : 'No jobs yet.'}
      >
        <DataTable data={jobs.data?.items ?? []} columns={columns} label="Jobs" loading={jobs.isPlaceholderData} />
      </QueryState>
      <CursorPager cursor={filters.cursor ?? null} nextCursor={jobs.data?.next_cursor} onChange={(c) => set({ cursor: c })} />
    </Stack>
  );
}
