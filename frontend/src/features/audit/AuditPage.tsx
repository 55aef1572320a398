import { Alert, Anchor, Autocomplete, Badge, Button, Checkbox, Code, Group, Modal, Stack, Text, TextInput } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import type { ColumnDef } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import type { AuditEvent } from '../../api/types';
import { CursorPager } from '../../components/CursorPager';
import { DataTable } from '../../components/DataTable';
import { JsonBlock } from '../../components/JsonBlock';
import { NoMatch } from '../../components/NoMatch';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { RequireRole } from '../../components/RequireRole';
import { mayCall } from '../../lib/roles';
import { useUrlFilters, useUrlPaging } from '../../lib/search-params';
import { useSession } from '../../lib/session';
import { useAuditEvent } from './api/get-audit-event';
import { useAudit } from './api/list-audit';
import { fromLocalInput, toLocalInput } from '../../lib/time';
import { useVerifyAudit } from './api/verify-audit';
import { diffDetails, targetName } from './audit-diff';
import { SideBySideDiff } from '../../components/SideBySideDiff';
import { LocalDateTimeInput } from '../../components/LocalDateTimeInput';
import { ACTION_PREFIXES, AUDIT_ACTIONS, targetPath } from './audit-vocabulary';


const isTruncated = (details: unknown) =>
  typeof details === 'object' && details !== null && (details as { truncated?: unknown }).truncated === true;

function EventDetails({ event: listed }: { event: AuditEvent }) {
  // Lists carry details up to 4 KiB; a larger value is fetched whole when opened.
  const whole = useAuditEvent(listed.id, isTruncated(listed.details));
  const event = whole.data ?? listed;
  const diff = diffDetails(event.details);
  if (!diff) return <JsonBlock value={event.details} label="Details" />;
  return (
    <Stack gap="xs">
      <SideBySideDiff rows={diff} beforeLabel="Before" afterLabel="After" label="Before and after" />
    </Stack>
  );
}

/** "schedule 4", linked to its page, with DELETED when it is gone. */
/** "schedule flaky-etl" when the event's details name its target, "schedule 6" otherwise. */
function targetText(event: AuditEvent): string {
  const kind = (event.target_type ?? '').replace('_', ' ');
  const name = targetName(event.details);
  return name && name !== event.target_id ? `${kind} ${name}` : `${kind} ${event.target_id ?? ''}`.trim();
}

function AuditTarget({ event }: { event: AuditEvent }) {
  if (!event.target_type) return <>—</>;
  const text = targetText(event);
  const path = targetPath(event);
  return (
    <Group gap={6} wrap="nowrap">
      {path ? (
        <Anchor component={Link} to={path} size="sm">
          {text}
        </Anchor>
      ) : (
        <Text size="sm">{text}</Text>
      )}
      {event.target_deleted && (
        <Badge size="sm" color="gray" variant="outline">
          deleted
        </Badge>
      )}
    </Group>
  );
}

type GroupedEvent = AuditEvent & { group: NonNullable<AuditEvent['group']> };

const numberParam = (value: string | null) => (value && /^\d+$/.test(value) ? Number(value) : undefined);

/** The run's events on this page: its actor, action and id range, every row. */
export function groupPath(event: GroupedEvent): string {
  const query = new URLSearchParams({ actor: event.actor, action: event.action, from_id: String(event.group.first_id), to_id: String(event.group.last_id), job_create: 'each' });
  return `/audit?${query.toString()}`;
}

/** "1,000 jobs from 09:12 to 09:14", linked to those events. */
function GroupTarget({ event }: { event: GroupedEvent }) {
  const { count, first_at } = event.group;
  const kind = event.target_type ? `${event.target_type.replace('_', ' ')}s` : 'events';
  return (
    <Group gap={6} wrap="nowrap">
      {/* The name starts with the text shown (WCAG 2.5.3, axe's label-content-name-mismatch). */}
      <Anchor component={Link} to={groupPath(event)} size="sm" aria-label={`${count.toLocaleString('en')} ${kind}: show the ${event.action} events of ${event.actor}`}>
        {count.toLocaleString('en')} {kind}
      </Anchor>
      <Text size="xs" c="dimmed">
        since <RelativeTime iso={first_at} />
      </Text>
    </Group>
  );
}

// The action filter's suggestions: the resource prefixes first ("job." finds every job action).
const ACTION_CHOICES = [
  { group: 'Every action of', items: ACTION_PREFIXES },
  { group: 'One action', items: AUDIT_ACTIONS },
];

/** The audit chain's verdict; only for those who may verify it (an instance ADMIN: a project's
 * ADMIN is refused by the API, so the console does not ask). */
export function ChainStatus() {
  const { user, can } = useSession();
  const allowed = mayCall('verifyAudit', user?.role, can);
  const verify = useVerifyAudit(allowed);
  if (!allowed) return null;
  if (verify.isPending) return <Badge color="gray">Verifying chain…</Badge>;
  if (verify.isError) return <Badge color="orange">Chain verify failed to run</Badge>;
  const result = verify.data;
  if (result.ok) {
    return (
      <Badge color="green" role="status">
        Chain intact ({result.checked} events checked)
      </Badge>
    );
  }
  return (
    <Alert color="red" title="Audit chain broken" role="alert" py="xs">
      {result.first_bad_id !== null && (
        <Text size="sm">
          The first tampered or missing event is #{result.first_bad_id} ({result.checked} checked).
        </Text>
      )}
      {result.truncated && (
        <Text size="sm">
          The newest events were deleted: the trail ends at #{result.head_id ?? 'nothing'}, a signed checkpoint
          reaches #{result.anchor_id}.
        </Text>
      )}
      {result.bad_checkpoints > 0 && (
        <Text size="sm">{result.bad_checkpoints} checkpoint(s) carry a forged signature.</Text>
      )}
      <Button size="xs" variant="subtle" onClick={() => verify.refetch()}>
        Verify again
      </Button>
    </Alert>
  );
}

export function AuditPage() {
  // A run's link (an id range) opens the trail anew, so the filter fields show its actor and action.
  const [params] = useSearchParams();
  return (
    <RequireRole operation="listAudit" title="Audit trail">
      <AuditTrail key={params.get('from_id') ?? ''} />
    </RequireRole>
  );
}

/** The trail with its filters. ``action``: a fixed action filter (the installation's Sign-ins
 * page lists `auth.` events), then not offered as a field. */
export function AuditTrail({ title = 'Audit trail', action, chain = true }: { title?: string; action?: string; chain?: boolean }) {
  const { params, set } = useUrlFilters();
  const paging = useUrlPaging();
  const keys = (['actor', 'action', 'target_type', 'target_id'] as const).filter((k) => !(action && k === 'action'));
  const filters = { ...Object.fromEntries(keys.map((k) => [k, params.get(k) ?? undefined])), ...(action ? { action } : {}) };
  const range = { at_after: params.get('at_after') ?? undefined, at_before: params.get('at_before') ?? undefined };
  // job.create is thousands of identical rows a day (every fire and submission): each run of
  // them by one actor in one project is one row with its count and a link to its events
  // (review 2026-12-05 §5.7), unless the reader asks for every row or follows such a link
  // (an id range: the run's events themselves).
  const idRange = { from_id: numberParam(params.get('from_id')), to_id: numberParam(params.get('to_id')) };
  const inRange = idRange.from_id !== undefined || idRange.to_id !== undefined;
  const everyRow = params.get('job_create') === 'each' || inRange;
  const audit = useAudit({ ...filters, ...range, ...idRange, ...(everyRow ? {} : { group: ['job.create' as const] }), cursor: paging.cursor ?? undefined }, true);
  const [draft, setDraft] = useState<Record<string, string>>(() => Object.fromEntries(keys.map((k) => [k, params.get(k) ?? ''])));
  // The whole draft goes to the URL, not only the field typed last: typing in two fields within
  // one debounce window must keep both filters.
  const push = useDebouncedCallback((next: Record<string, string>) => set(next), 300);
  const [open, setOpen] = useState<AuditEvent | null>(null);
  const filtered = [...keys, 'at_after', 'at_before', 'from_id', 'to_id'].some((k) => params.get(k));
  const clear = () => {
    push.cancel();
    setDraft(Object.fromEntries(keys.map((k) => [k, ''])));
    set(Object.fromEntries([...keys, 'at_after', 'at_before', 'from_id', 'to_id'].map((k) => [k, null])));
  };

  // Memoised: cell renderers are components to React, so a new function each render would remount
  // every cell (losing focus and detaching the buttons under the user's pointer).
  const columns = useMemo<ColumnDef<AuditEvent, unknown>[]>(() => [
    { header: 'When', cell: ({ row }) => <RelativeTime iso={row.original.at} /> },
    { header: 'Actor', accessorKey: 'actor' },
    {
      header: 'Action',
      cell: ({ row }) => (
        <Group gap={6} wrap="nowrap">
          <Code>{row.original.action}</Code>
          {row.original.group && (
            <Badge size="sm" variant="light" data-testid="group-count">
              × {row.original.group.count.toLocaleString('en')}
            </Badge>
          )}
        </Group>
      ),
    },
    { header: 'Target', cell: ({ row }) => (row.original.group ? <GroupTarget event={row.original as GroupedEvent} /> : <AuditTarget event={row.original} />) },
    { header: 'IP', cell: ({ row }) => row.original.ip ?? '—' },
    {
      header: 'Details',
      cell: ({ row }) => row.original.group ? null : (
        <Button size="compact-xs" variant="light" onClick={() => setOpen(row.original)} aria-label={`${diffDetails(row.original.details) ? 'Diff' : 'Details'} of event ${row.original.id}`}>
          {diffDetails(row.original.details) ? 'Diff' : 'Details'}
        </Button>
      ),
    },
  ], []);

  return (
    <Stack>
      <PageHeader title={title}>{chain && <ChainStatus />}</PageHeader>
      <Group role="search" aria-label="Audit filters">
        {keys.map((k) => {
          const onChange = (value: string) => {
            const next = { ...draft, [k]: value };
            setDraft(next);
            push(next);
          };
          const label = { actor: 'Actor', action: 'Action', target_type: 'Target type', target_id: 'Target id' }[k];
          return k === 'action' ? (
            <Autocomplete
              key={k}
              label={label}
              placeholder="job. or schedule.update"
              w={220}
              data={ACTION_CHOICES}
              limit={60}
              maxDropdownHeight={320}
              value={draft[k] ?? ''}
              onChange={onChange}
            />
          ) : (
            <TextInput key={k} label={label} w={180} value={draft[k] ?? ''} onChange={(e) => onChange(e.currentTarget.value)} />
          );
        })}
        <LocalDateTimeInput
          label="After"
          w={210}
          value={toLocalInput(range.at_after)}
          onChange={(v) => set({ at_after: fromLocalInput(v) })}
        />
        <LocalDateTimeInput
          label="Before"
          w={210}
          value={toLocalInput(range.at_before)}
          onChange={(v) => set({ at_before: fromLocalInput(v) })}
        />
        {!action && !inRange && (
          <Checkbox
            label="Group job.create"
            description="A run by one actor in one project is one row"
            mt={4}
            checked={!everyRow}
            onChange={(e) => set({ job_create: e.currentTarget.checked ? null : 'each' })}
          />
        )}
      </Group>
      {inRange && (
        <Group gap="xs" data-testid="id-range">
          <Text size="sm">
            Events #{idRange.from_id ?? '…'} to #{idRange.to_id ?? '…'}
          </Text>
          <Button
            variant="default"
            size="xs"
            onClick={() => {
              push.cancel();
              setDraft((d) => ({ ...d, actor: '', action: '' }));
              set({ from_id: null, to_id: null, job_create: null, action: null, actor: null });
            }}
          >
            Show the whole trail
          </Button>
        </Group>
      )}
      <QueryState isPending={audit.isPending} onRetry={() => audit.refetch()} error={audit.error} isEmpty={audit.data?.items.length === 0} empty={filtered ? <NoMatch text="No audit events match these filters." onClear={clear} /> : 'No audit events yet: every change made through the API or this console (sign-ins, jobs, schedules, users) is recorded here.'}>
        <DataTable data={audit.data?.items ?? []} columns={columns} label="Audit events" loading={audit.isPlaceholderData} />
      </QueryState>
      <CursorPager paging={paging} nextCursor={audit.data?.next_cursor} />
      {/* Wide enough for two values side by side (review 2026-12-05: the After column was off-screen). */}
      <Modal opened={open !== null} onClose={() => setOpen(null)} title={open ? `${open.action} of ${open.target_type ? targetText(open) : '—'} by ${open.actor}` : ''} size="min(1200px, 96vw)">
        {open && (
          <Stack>
            <Text size="sm" c="dimmed">
              Event #{open.id}, request {open.request_id ?? '—'}
            </Text>
            <EventDetails event={open} />
          </Stack>
        )}
      </Modal>
    </Stack>
  );
}
