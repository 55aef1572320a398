import { Anchor, Code, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { Link, useNavigate } from 'react-router';
import { useJobs } from '../../api/queries/list-jobs';
import type { Schedule } from '../../api/types';
import { CursorPager, totalText } from '../../components/CursorPager';
import { DataTable } from '../../components/DataTable';
import { FirstStep } from '../../components/FirstStep';
import { GatedButton } from '../../components/GatedButton';
import { NoMatch } from '../../components/NoMatch';
import { PageHeader } from '../../components/PageHeader';
import { PollingPicker } from '../../components/PollingPicker';
import { usePolling } from '../../lib/polling';
import { QueryState } from '../../components/QueryState';
import { RunStrip, ScheduleStateBadge, scheduleState } from '../../components/ScheduleHealth';
import { describeCron } from '../../lib/cron-english';
import { fromLocalInput, toLocalInput } from '../../lib/time';
import { useUrlFilters, useUrlPaging } from '../../lib/search-params';
import { useScheduleCount } from './api/count-schedules';
import { useSchedules } from './api/list-schedules';
import { ScheduleTime } from './ScheduleTimes';
import { SearchInput } from '../../components/SearchInput';

/** One request per row (the last 10 runs) gives both the state and the strip. */
function StateAndRuns({ schedule }: { schedule: Schedule }) {
  const jobs = useJobs({ schedule_id: schedule.id, limit: 10 });
  if (jobs.isPending) return <Text size="xs">…</Text>;
  const runs = jobs.data?.items ?? [];
  return (
    <Stack gap={4}>
      <ScheduleStateBadge state={scheduleState(schedule, runs)} />
      <RunStrip runs={runs} label={schedule.name} />
    </Stack>
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
  { header: 'Project', accessorKey: 'project' },
  { header: 'Queue', accessorKey: 'queue' },
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
  { header: 'State and last runs', cell: ({ row }) => <StateAndRuns schedule={row.original} /> },
  {
    header: 'Next run',
    cell: ({ row }) => (row.original.paused || row.original.deleted_at ? <Text size="sm" c="dimmed">—</Text> : <ScheduleTime iso={row.original.next_run_at} timeZone={row.original.timezone} />),
  },
];

const PAGE_SIZES = ['10', '50', '100', '200'];

export function SchedulesPage() {
  const navigate = useNavigate();
  const { params, set } = useUrlFilters();
  const paging = useUrlPaging();
  const paused = params.get('paused');
  const polling = usePolling(10000);
  const filters = {
    q: params.get('q') ?? undefined,
    paused: paused === 'true' ? true : paused === 'false' ? false : undefined,
    include_deleted: params.get('include_deleted') === 'true' || undefined,
    created_after: params.get('created_after') ?? undefined,
    created_before: params.get('created_before') ?? undefined,
  };
  const filtered = Object.values(filters).some((v) => v !== undefined);
  const limit = PAGE_SIZES.includes(params.get('limit') ?? '') ? Number(params.get('limit')) : undefined;
  const schedules = useSchedules({ ...filters, limit, cursor: paging.cursor ?? undefined }, polling.refetchInterval);
  const count = useScheduleCount(filters, polling.refetchInterval);
  return (
    <Stack>
      <PageHeader title="Schedules">
        <PollingPicker choice={polling.choice} onChange={polling.setChoice} visible={polling.visible} failing={Boolean(schedules.error) && Boolean(schedules.data)} updatedAt={schedules.dataUpdatedAt} />
        <GatedButton operation="createSchedule" onClick={() => navigate('/schedules/new')}>
          New schedule
        </GatedButton>
      </PageHeader>
      <Group align="flex-end" role="search" aria-label="Schedule filters">
        <SearchInput initial={params.get('q') ?? ''} placeholder="#id, name, handler…" onSearch={(q) => set({ q })} />
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
        <TextInput
          label="Created after"
          type="datetime-local"
          w={210}
          value={toLocalInput(filters.created_after)}
          onChange={(e) => set({ created_after: fromLocalInput(e.currentTarget.value) })}
        />
        <TextInput
          label="Created before"
          type="datetime-local"
          w={210}
          value={toLocalInput(filters.created_before)}
          onChange={(e) => set({ created_before: fromLocalInput(e.currentTarget.value) })}
        />
        <Select
          label="Per page"
          data={PAGE_SIZES}
          value={String(limit ?? 50)}
          onChange={(v) => set({ limit: v === '50' ? null : v })}
          allowDeselect={false}
          w={100}
        />
      </Group>
      <QueryState
        isPending={schedules.isPending}
        onRetry={() => schedules.refetch()}
        error={schedules.error}
        isEmpty={schedules.data?.items.length === 0}
        empty={filtered ? <NoMatch text="No schedules match these filters." onClear={() => set(Object.fromEntries(Object.keys(filters).map((k) => [k, null])))} /> : <FirstStep text="No schedules yet." action="Create a schedule" to="/schedules/new" operation="createSchedule" />}
      >
        <DataTable data={schedules.data?.items ?? []} columns={columns} label="Schedules" loading={schedules.isPlaceholderData} />
      </QueryState>
      <CursorPager
        paging={paging}
        nextCursor={schedules.data?.next_cursor}
        total={count.data ? totalText(count.data.count, count.data.limit, count.data.count === 1 ? 'schedule' : 'schedules') : undefined}
      />
    </Stack>
  );
}
