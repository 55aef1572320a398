import { Anchor, Code, Group, Select, Stack, Text } from '@mantine/core';
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
import { ScheduleCause } from '../../components/ScheduleCause';
import { FilterPanel } from '../../components/FilterPanel';
import { RelativeTime } from '../../components/RelativeTime';
import { describeCron } from '../../lib/cron-english';
import { formatAt, formatCompactRelative, fromLocalInput, toLocalInput } from '../../lib/time';
import { useUrlFilters, useUrlPaging } from '../../lib/search-params';
import { useScheduleCount } from './api/count-schedules';
import { SCHEDULE_SORTS, useSchedules } from './api/list-schedules';
import { SearchInput } from '../../components/SearchInput';
import { LocalDateTimeInput } from '../../components/LocalDateTimeInput';

/** The last 10 runs of a schedule: one request per row, shared by its state and its strip. */
const useRuns = (schedule: Schedule) => useJobs({ schedule_id: schedule.id, limit: 10 });

function State({ schedule }: { schedule: Schedule }) {
  const jobs = useRuns(schedule);
  if (jobs.isPending && !schedule.health) return <Text size="xs">…</Text>;
  return <ScheduleStateBadge state={scheduleState(schedule, jobs.data?.items)} />;
}

function Runs({ schedule }: { schedule: Schedule }) {
  const jobs = useRuns(schedule);
  if (jobs.isPending) return <Text size="xs">…</Text>;
  return <RunStrip runs={jobs.data?.items ?? []} label={schedule.name} />;
}

/** The next run as "in 5 min", its time in the schedule's zone and in UTC on hover. */
function NextRun({ schedule }: { schedule: Schedule }) {
  if (schedule.paused || schedule.deleted_at || !schedule.next_run_at) return <Text size="xs" c="dimmed" span>—</Text>;
  const at = schedule.next_run_at;
  const exact = `${formatAt(at, schedule.timezone)} · ${formatAt(at, 'UTC')}`;
  return (
    <time dateTime={at} title={exact}>
      {formatCompactRelative(at)}
    </time>
  );
}

const columns: ColumnDef<Schedule, unknown>[] = [
  {
    header: 'Name',
    meta: { width: 160, sortKey: 'name', first: 'asc' },
    cell: ({ row }) => (
      <Anchor component={Link} to={`/schedules/${row.original.id}`} title={row.original.name}>
        {row.original.name}
      </Anchor>
    ),
  },
  { header: 'Handler', accessorKey: 'handler', meta: { width: 104 }, cell: ({ row }) => <span title={row.original.handler}>{row.original.handler}</span> },
  {
    header: 'Queue',
    meta: { width: 140 },
    cell: ({ row }) => <span title={`project ${row.original.project}, queue ${row.original.queue}`}>{`${row.original.project} · ${row.original.queue}`}</span>,
  },
  {
    header: 'When',
    meta: { width: 176 },
    cell: ({ row }) => {
      const english = `${describeCron(row.original.cron) ?? ''} (${row.original.timezone})`;
      return (
        <span title={`${row.original.cron} — ${english}`}>
          <Code>{row.original.cron}</Code> {english}
        </span>
      );
    },
  },
  { header: 'State', meta: { width: 84 }, cell: ({ row }) => <State schedule={row.original} /> },
  { header: 'Last runs', meta: { width: 128 }, cell: ({ row }) => <Runs schedule={row.original} /> },
  // Why it is in that state: its paused queue (linked), its last error, its pause's end and reason.
  { header: 'Why', cell: ({ row }) => <ScheduleCause schedule={row.original} /> },
  { header: 'Last run', meta: { width: 84, sortKey: 'last_run_at' }, cell: ({ row }) => <RelativeTime compact iso={row.original.last_run_at} /> },
  { header: 'Next run', meta: { width: 84, sortKey: 'next_run_at', first: 'asc' }, cell: ({ row }) => <NextRun schedule={row.original} /> },
];

/** A schedule as a card on a phone: name and state, when, why. */
function ScheduleCard({ schedule }: { schedule: Schedule }) {
  return (
    <Stack gap={2} data-schedule={schedule.name}>
      <Group justify="space-between" wrap="nowrap" gap="xs">
        <Anchor component={Link} to={`/schedules/${schedule.id}`} fw={600} truncate="end">
          {schedule.name}
        </Anchor>
        <State schedule={schedule} />
      </Group>
      <Text size="xs" truncate="end">
        <Code>{schedule.cron}</Code> {describeCron(schedule.cron) ?? ''} ({schedule.timezone}) · next <NextRun schedule={schedule} />
      </Text>
      <Text size="xs" c="dimmed" truncate="end">
        {schedule.project} · {schedule.queue} · {schedule.handler}
      </Text>
      <Text size="xs" truncate="end">
        <ScheduleCause schedule={schedule} />
      </Text>
      <Runs schedule={schedule} />
    </Stack>
  );
}

const PAGE_SIZES = ['10', '50', '100', '200'];

export function SchedulesPage() {
  const navigate = useNavigate();
  const { params, set } = useUrlFilters();
  const paging = useUrlPaging();
  const paused = params.get('paused');
  const polling = usePolling(10000);
  const sortParam = params.get('sort');
  const sort = SCHEDULE_SORTS.find((v) => v !== '-id' && v === sortParam);
  const filters = {
    q: params.get('q') ?? undefined,
    paused: paused === 'true' ? true : paused === 'false' ? false : undefined,
    include_deleted: params.get('include_deleted') === 'true' || undefined,
    created_after: params.get('created_after') ?? undefined,
    created_before: params.get('created_before') ?? undefined,
  };
  const filtered = Object.values(filters).some((v) => v !== undefined);
  const limit = PAGE_SIZES.includes(params.get('limit') ?? '') ? Number(params.get('limit')) : undefined;
  const schedules = useSchedules({ ...filters, sort, limit, cursor: paging.cursor ?? undefined }, polling.refetchInterval);
  const filterCount = [filters.paused !== undefined, filters.include_deleted, filters.created_after, filters.created_before, limit].filter(Boolean).length;
  const count = useScheduleCount(filters, polling.refetchInterval);
  return (
    <Stack gap="sm">
      <PageHeader title="Schedules">
        <PollingPicker choice={polling.choice} onChange={polling.setChoice} visible={polling.visible} failing={Boolean(schedules.error) && Boolean(schedules.data)} updatedAt={schedules.dataUpdatedAt} />
        <GatedButton operation="createSchedule" onClick={() => navigate('/schedules/new')}>
          New schedule
        </GatedButton>
      </PageHeader>
      <FilterPanel count={filterCount} label="Schedule filters" lead={<SearchInput hideLabel initial={params.get('q') ?? ''} placeholder="#id, name, handler…" onSearch={(q) => set({ q })} />}>
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
        <LocalDateTimeInput
          label="Created after"
          w={210}
          value={toLocalInput(filters.created_after)}
          onChange={(v) => set({ created_after: fromLocalInput(v) })}
        />
        <LocalDateTimeInput
          label="Created before"
          w={210}
          value={toLocalInput(filters.created_before)}
          onChange={(v) => set({ created_before: fromLocalInput(v) })}
        />
        <Select
          label="Per page"
          data={PAGE_SIZES}
          value={String(limit ?? 50)}
          onChange={(v) => set({ limit: v === '50' ? null : v })}
          allowDeselect={false}
          w={100}
        />
      </FilterPanel>
      <QueryState
        isPending={schedules.isPending}
        onRetry={() => schedules.refetch()}
        error={schedules.error}
        isEmpty={schedules.data?.items.length === 0}
        empty={filtered ? <NoMatch text="No schedules match these filters." onClear={() => set({ ...Object.fromEntries(Object.keys(filters).map((k) => [k, null])), sort: null })} /> : <FirstStep text="No schedules yet." action="Create a schedule" to="/schedules/new" operation="createSchedule" />}
      >
        <DataTable
          data={schedules.data?.items ?? []}
          columns={columns}
          label="Schedules"
          loading={schedules.isPlaceholderData}
          dense
          sort={{ value: sort ?? '-id', onChange: (next) => set({ sort: next === '-id' ? null : next }) }}
          card={(schedule) => <ScheduleCard schedule={schedule} />}
        />
      </QueryState>
      <CursorPager
        paging={paging}
        nextCursor={schedules.data?.next_cursor}
        total={count.data ? totalText(count.data.count, count.data.limit, count.data.count === 1 ? 'schedule' : 'schedules') : undefined}
      />
    </Stack>
  );
}
