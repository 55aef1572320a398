import { Anchor, Badge, Code, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import type { ColumnDef } from '@tanstack/react-table';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useJobs } from '../../api/queries/list-jobs';
import type { Schedule } from '../../api/types';
import { CursorPager } from '../../components/CursorPager';
import { DataTable } from '../../components/DataTable';
import { GatedButton } from '../../components/GatedButton';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { StatusBadge } from '../../components/StatusBadge';
import { describeCron } from '../../lib/cron-english';
import { useUrlFilters } from '../../lib/search-params';
import { useSchedules } from './api/list-schedules';
import { ScheduleTime } from './ScheduleTimes';

function LastOutcome({ scheduleId }: { scheduleId: number }) {
  const jobs = useJobs({ schedule_id: scheduleId, limit: 1 });
  const last = jobs.data?.items[0];
  if (jobs.isPending) return <Text size="xs">…</Text>;
  if (!last) return <Text size="sm" c="dimmed">never ran</Text>;
  return (
    <Anchor component={Link} to={`/jobs/${last.id}`} aria-label={`Last run: job ${last.id}, ${last.status}`}>
      <StatusBadge status={last.status} />
    </Anchor>
  );
}

const columns: ColumnDef<Schedule, unknown>[] = [
  {
    header: 'Name',
    cell: ({ row }) => (
      <Anchor component={Link} to={`/schedules/${row.original.id}`}>
        {row.original.name}
      </Anchor>
    ),
  },
  { header: 'Handler', accessorKey: 'handler' },
  {
    header: 'When',
    cell: ({ row }) => (
      <Stack gap={0}>
        <Code>{row.original.cron}</Code>
        <Text size="xs" c="dimmed">
          {describeCron(row.original.cron) ?? ''} ({row.original.timezone})
        </Text>
      </Stack>
    ),
  },
  {
    header: 'State',
    cell: ({ row }) =>
      row.original.deleted_at ? <Badge color="gray">deleted</Badge> : row.original.paused ? <Badge color="yellow">paused</Badge> : <Badge color="green">active</Badge>,
  },
  {
    header: 'Next run',
    cell: ({ row }) => (row.original.paused || row.original.deleted_at ? <Text size="sm" c="dimmed">—</Text> : <ScheduleTime iso={row.original.next_run_at} timeZone={row.original.timezone} />),
  },
  { header: 'Last outcome', cell: ({ row }) => <LastOutcome scheduleId={row.original.id} /> },
];

export function SchedulesPage() {
  const navigate = useNavigate();
  const { params, set } = useUrlFilters();
  const paused = params.get('paused');
  const schedules = useSchedules({
    q: params.get('q') ?? undefined,
    paused: paused === 'true' ? true : paused === 'false' ? false : undefined,
    include_deleted: params.get('include_deleted') === 'true' || undefined,
    cursor: params.get('cursor') ?? undefined,
  });
  const [search, setSearch] = useState(params.get('q') ?? '');
  const pushSearch = useDebouncedCallback((q: string) => set({ q }), 300);
  return (
    <Stack>
      <PageHeader title="Schedules">
        <GatedButton role="ADMIN" onClick={() => navigate('/schedules/new')}>
          New schedule
        </GatedButton>
      </PageHeader>
      <Group align="flex-end" role="search" aria-label="Schedule filters">
        <TextInput
          label="Search"
          type="search"
          w={240}
          value={search}
          onChange={(e) => {
            setSearch(e.currentTarget.value);
            pushSearch(e.currentTarget.value);
          }}
        />
        <Select
          label="State"
          w={160}
          data={[
            { value: 'false', label: 'Active' },
            { value: 'true', label: 'Paused' },
          ]}
          placeholder="Any"
          clearable
          value={paused}
          onChange={(v) => set({ paused: v })}
        />
        <Select
          label="Deleted"
          w={180}
          allowDeselect={false}
          data={[
            { value: 'false', label: 'Hide deleted' },
            { value: 'true', label: 'Include deleted' },
          ]}
          value={params.get('include_deleted') === 'true' ? 'true' : 'false'}
          onChange={(v) => set({ include_deleted: v === 'true' ? 'true' : null })}
        />
      </Group>
      <QueryState
        isPending={schedules.isPending}
        error={schedules.error}
        isEmpty={schedules.data?.items.length === 0}
        empty={params.toString() ? 'No schedules match these filters.' : 'No schedules yet.'}
      >
        <DataTable data={schedules.data?.items ?? []} columns={columns} label="Schedules" loading={schedules.isPlaceholderData} />
      </QueryState>
      <CursorPager cursor={params.get('cursor')} nextCursor={schedules.data?.next_cursor} onChange={(c) => set({ cursor: c })} />
    </Stack>
  );
}
