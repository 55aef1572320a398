import { Anchor, Checkbox, Group, MultiSelect, Select, Stack, Text } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useMemo, useState, type ReactNode } from 'react';
import { Link, useNavigate } from 'react-router';
import { useHandlers } from '../../api/queries/list-handlers';
import { JOB_SORTS, useJobs, type JobFilters } from '../../api/queries/list-jobs';
import { useQueues } from '../../api/queries/list-queues';
import { JOB_STATUSES, type Job, type JobStatus } from '../../api/types';
import { CursorPager, totalText } from '../../components/CursorPager';
import { PollingPicker } from '../../components/PollingPicker';
import { useScheduleOptions } from '../../api/queries/schedule-options';
import { ScheduleLink } from '../../components/ScheduleLink';
import { usePolling } from '../../lib/polling';
import { isReadOnly } from '../../lib/roles';
import { useSession } from '../../lib/session';
import { fromLocalInput, toLocalInput } from '../../lib/time';
import { useJobCount } from './api/count-jobs';
import { DataTable } from '../../components/DataTable';
import { GatedButton } from '../../components/GatedButton';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { errorHeadline } from '../../components/FailureText';
import { FirstStep } from '../../components/FirstStep';
import { NoMatch } from '../../components/NoMatch';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { useUrlFilters, useUrlPaging } from '../../lib/search-params';
import { BulkActions } from './BulkActions';
import { StatusTabs } from './StatusTabs';
import { FilterPanel } from '../../components/FilterPanel';
import { SearchInput } from '../../components/SearchInput';
import { LocalDateTimeInput } from '../../components/LocalDateTimeInput';
import { ApiError } from '../../api/problem';

const baseColumns: ColumnDef<Job, unknown>[] = [
  {
    header: 'Job',
    accessorKey: 'id',
    meta: { width: 76, sortKey: 'id' },
    cell: ({ row }) => (
      <Anchor component={Link} to={`/jobs/${row.original.id}`}>
        #{row.original.id}
      </Anchor>
    ),
  },
  { header: 'Handler', accessorKey: 'handler', meta: { width: 128 }, cell: ({ row }) => <span title={row.original.handler}>{row.original.handler}</span> },
  { header: 'Project', accessorKey: 'project', meta: { width: 80 }, cell: ({ row }) => <span title={row.original.project}>{row.original.project}</span> },
  { header: 'Queue', accessorKey: 'queue', meta: { width: 100 }, cell: ({ row }) => <span title={row.original.queue}>{row.original.queue}</span> },
  { header: 'Status', accessorKey: 'status', meta: { width: 96 }, cell: ({ row }) => <StatusBadge status={row.original.status} /> },
  { header: 'Trigger', accessorKey: 'trigger', meta: { width: 68 } },
  {
    header: 'Schedule',
    accessorKey: 'schedule_id',
    meta: { width: 120 },
    cell: ({ row }) => <ScheduleLink id={row.original.schedule_id} name={row.original.schedule_name} deleted={row.original.schedule_deleted} />,
  },
  { header: 'Tries', meta: { width: 48 }, cell: ({ row }) => <span title={`attempt ${row.original.attempt_count} of ${row.original.max_attempts}`}>{`${row.original.attempt_count}/${row.original.max_attempts}`}</span> },
  {
    header: 'Error',
    // The headline only (the traceback is on the job's page): why a row matched a search, at a glance.
    cell: ({ row }) => (row.original.error ? <span title={errorHeadline(row.original.error)}>{errorHeadline(row.original.error)}</span> : '—'),
  },
  { header: 'Created', meta: { width: 88, sortKey: 'created_at' }, cell: ({ row }) => <RelativeTime compact iso={row.original.created_at} /> },
  { header: 'Run at', meta: { width: 88 }, cell: ({ row }) => <RelativeTime compact iso={row.original.run_at} /> },
  { header: 'Finished', meta: { width: 92, sortKey: 'finished_at' }, cell: ({ row }) => <RelativeTime compact iso={row.original.finished_at} /> },
];

/** A job as a card on a phone: what the row says, in three short lines. */
function JobCard({ job, select }: { job: Job; select: ReactNode }) {
  return (
    <Stack gap={2} data-job={job.id}>
      <Group gap="xs" wrap="nowrap" justify="space-between">
        <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
          {select}
          <Anchor component={Link} to={`/jobs/${job.id}`} fw={600}>
            #{job.id}
          </Anchor>
          <Text size="sm" truncate="end">
            {job.handler}
          </Text>
        </Group>
        <StatusBadge status={job.status} />
      </Group>
      <Text size="xs" c="dimmed" truncate="end">
        {job.project} · {job.queue} · {job.trigger} · {job.attempt_count}/{job.max_attempts} tries · <RelativeTime compact iso={job.finished_at ?? job.created_at} />
      </Text>
      {job.schedule_id !== null && job.schedule_id !== undefined && (
        <Text size="xs" truncate="end">
          Schedule <ScheduleLink id={job.schedule_id} name={job.schedule_name} deleted={job.schedule_deleted} />
        </Text>
      )}
      {job.error && (
        <Text size="xs" fw={500} truncate="end" title={errorHeadline(job.error)}>
          {errorHeadline(job.error)}
        </Text>
      )}
    </Stack>
  );
}


const PAGE_SIZES = ['10', '50', '100', '200'];

// Clearing the filters keeps the page size: it is how the list is read, not what it selects.
const JOB_FILTER_PARAMS = { status: null, handler: null, queue: null, schedule_id: null, q: null, created_after: null, created_before: null, deliveries: null, sort: null };

export function JobsPage() {
  const navigate = useNavigate();
  const { params, set } = useUrlFilters();
  const paging = useUrlPaging();
  const handlers = useHandlers();
  const queues = useQueues();
  const queueNames = [...new Set([...(queues.data ?? []).map((q) => q.name), ...(params.get('queue') ? [params.get('queue') as string] : [])])].sort();
  const scheduleId = Number(params.get('schedule_id'));
  const filters: JobFilters = {
    status: params.getAll('status').filter((s): s is JobStatus => (JOB_STATUSES as string[]).includes(s)),
    handler: params.get('handler') ?? undefined,
    queue: params.get('queue') ?? undefined,
    schedule_id: Number.isInteger(scheduleId) && scheduleId > 0 ? scheduleId : undefined,
    q: params.get('q') ?? undefined,
    created_after: params.get('created_after') ?? undefined,
    created_before: params.get('created_before') ?? undefined,
    // Notification deliveries are cronplane's own jobs: left out unless asked for, or unless the handler filter names them.
    exclude_trigger: params.get('deliveries') === '1' || params.get('handler') === 'notification.deliver' ? undefined : ['notification'],
    sort: JOB_SORTS.find((sort) => sort !== '-id' && sort === params.get('sort')),
    cursor: paging.cursor ?? undefined,
    limit: PAGE_SIZES.includes(params.get('limit') ?? '') ? Number(params.get('limit')) : undefined,
  };
  const polling = usePolling(5000);
  const jobs = useJobs(filters, polling.refetchInterval);
  const [scheduleSearch, setScheduleSearch] = useState('');
  const scheduleOptions = useScheduleOptions(scheduleSearch, filters.schedule_id);
  // Row selection for bulk actions. It belongs to the filters it was made under: changing them
  // (or the page) clears it, so an action never applies to rows no longer on screen by surprise.
  const filterKey = params.toString();
  const [selection, setSelection] = useState<{ key: string; ids: Set<number>; all: boolean }>({ key: filterKey, ids: new Set(), all: false });
  const current = selection.key === filterKey ? selection : { key: filterKey, ids: new Set<number>(), all: false };
  const rows = useMemo(() => jobs.data?.items ?? [], [jobs.data]);
  const pageIds = rows.map((j) => j.id);
  const pageFull = pageIds.length > 0 && pageIds.every((id) => current.ids.has(id));
  const toggle = (id: number, on: boolean) => {
    const ids = new Set(current.ids);
    if (on) ids.add(id);
    else ids.delete(id);
    setSelection({ key: filterKey, ids, all: false });
  };
  const toggleAll = (on: boolean) => setSelection({ key: filterKey, ids: on ? new Set(pageIds) : new Set(), all: false });
  // A viewer can take no bulk action: no selection checkboxes either (review 2026-12-05 §5.15).
  const readOnly = isReadOnly(useSession().can);
  const selectColumn: ColumnDef<Job, unknown>[] = [
    {
      id: 'select',
      meta: { width: 32 },
      header: () => (
        <Checkbox
          aria-label="Select every job on this page"
          checked={pageFull}
          indeterminate={!pageFull && current.ids.size > 0}
          onChange={(e) => toggleAll(e.currentTarget.checked)}
        />
      ),
      cell: ({ row }) => (
        <Checkbox
          aria-label={`Select job #${row.original.id}`}
          checked={current.all || current.ids.has(row.original.id)}
          onChange={(e) => toggle(row.original.id, e.currentTarget.checked)}
        />
      ),
    },
  ];
  const columns = readOnly ? baseColumns : [...selectColumn, ...baseColumns];
  const matchFilters = {
    status: filters.status,
    handler: filters.handler,
    queue: filters.queue,
    schedule_id: filters.schedule_id,
    q: filters.q,
    created_after: filters.created_after,
    created_before: filters.created_before,
    exclude_trigger: filters.exclude_trigger,
  };
  const count = useJobCount(matchFilters, true);
  // The filters behind the Filters button that are set (the search box and the tabs are in view).
  const filterCount = [
    (filters.status?.length ?? 0) > 1,
    filters.handler,
    filters.queue,
    filters.schedule_id,
    filters.created_after,
    filters.created_before,
    params.get('limit'),
    params.get('deliveries'),
  ].filter(Boolean).length;
  // A search the server refused (too broad to answer in time, too long) is fixed in the search
  // box, so that is where it says why; asking again unchanged would be refused again.
  const searchError = jobs.error instanceof ApiError && jobs.error.status === 422 ? jobs.error.fieldErrors.q : undefined;

  return (
    <Stack gap="sm">
      <PageHeader title="Jobs">
        <PollingPicker choice={polling.choice} onChange={polling.setChoice} visible={polling.visible} failing={Boolean(jobs.error) && Boolean(jobs.data)} updatedAt={jobs.dataUpdatedAt} />
        <GatedButton operation="createJob" onClick={() => navigate('/jobs/new')}>
          New ad-hoc job
        </GatedButton>
      </PageHeader>
      <FilterPanel
        count={filterCount}
        label="Job filters"
        before={<StatusTabs
        statuses={filters.status ?? []}
        queue={filters.queue}
        excludeDeliveries={Boolean(filters.exclude_trigger)}
        otherFilters={Boolean(filters.handler || filters.schedule_id || filters.q || filters.created_after || filters.created_before)}
        refetchInterval={polling.refetchInterval}
        onChoose={(status) => set({ status: status ? [status] : null })}
      />}
        lead={<SearchInput hideLabel initial={filters.q ?? ''} placeholder="#id, handler, key, error…" onSearch={(q) => set({ q })} error={searchError} />}
      >
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
        <Select
          label="Queue"
          placeholder="Any"
          data={queueNames}
          value={filters.queue ?? null}
          onChange={(v) => set({ queue: v })}
          clearable
          searchable
          w={160}
        />
        <Select
          label="Schedule"
          placeholder="Any"
          data={scheduleOptions}
          value={filters.schedule_id ? String(filters.schedule_id) : null}
          onChange={(v) => set({ schedule_id: v })}
          clearable
          searchable
          onSearchChange={setScheduleSearch}
          // The server searched already (#id, name prefixes): keep its answer as it is.
          filter={({ options }) => options}
          nothingFoundMessage="No schedule found"
          w={200}
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
          value={String(filters.limit ?? 50)}
          onChange={(v) => set({ limit: v === '50' ? null : v })}
          allowDeselect={false}
          w={100}
        />
        <Checkbox
          label="Include notification deliveries"
          checked={!filters.exclude_trigger}
          disabled={filters.handler === 'notification.deliver'}
          onChange={(e) => set({ deliveries: e.currentTarget.checked ? '1' : null })}
          mb={8}
        />
      </FilterPanel>
      {filters.sort?.endsWith('finished_at') && (
        <Text size="xs" c="dimmed">
          Sorted by finish time: unfinished jobs are not listed.
        </Text>
      )}
      <BulkActions
        selectedIds={[...current.ids]}
        selectedStatuses={rows.filter((j) => current.ids.has(j.id)).map((j) => j.status)}
        pageFull={pageFull}
        filters={matchFilters}
        allMatching={current.all}
        onAllMatching={(all) => setSelection({ ...current, all })}
        onClear={() => setSelection({ key: filterKey, ids: new Set(), all: false })}
      />
      <QueryState
        isPending={jobs.isPending}
        onRetry={searchError ? undefined : () => jobs.refetch()}
        hideFields={searchError ? ['q'] : false}
        error={jobs.error}
        isEmpty={jobs.data?.items.length === 0}
        empty={params.toString() ? <NoMatch text="No jobs match these filters." onClear={() => set(JOB_FILTER_PARAMS)} /> : <FirstStep text="No jobs yet." action="Submit a first job (a noop shows the whole path)" to="/jobs/new" operation="createJob" />}
      >
        <DataTable
          data={rows}
          columns={columns}
          label="Jobs"
          loading={jobs.isPlaceholderData}
          dense
          sort={{ value: filters.sort ?? '-id', onChange: (next) => set({ sort: next === '-id' ? null : next }) }}
          card={(job) => (
            <JobCard
              job={job}
              select={readOnly ? null : <Checkbox aria-label={`Select job #${job.id}`} checked={current.all || current.ids.has(job.id)} onChange={(e) => toggle(job.id, e.currentTarget.checked)} />}
            />
          )}
        />
      </QueryState>
      <CursorPager
        paging={paging}
        nextCursor={jobs.data?.next_cursor}
        total={count.data ? totalText(count.data.count, count.data.limit, count.data.count === 1 ? 'job' : 'jobs') : undefined}
      />
    </Stack>
  );
}
