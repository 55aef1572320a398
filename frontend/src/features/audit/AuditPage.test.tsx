import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AuditEvent } from '../../api/types';
import { anAuditEvent, anAuditVerify } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { AuditPage } from './AuditPage';
import { diffDetails } from './audit-diff';
import { ACTION_PREFIXES, AUDIT_ACTIONS, targetPath } from './audit-vocabulary';

const event = anAuditEvent({
  id: 9, actor: 'ada', action: 'schedule.update', target_type: 'schedule', target_id: '3', request_id: 'r1',
  details: { before: { cron: '0 0 9 * * *', paused: false }, after: { cron: '0 30 9 * * MON-FRI', paused: false } },
});
const auditPage = (items = [event]) =>
  http.get('/api/v1/audit', ({ response }) => response(200).json({ items, next_cursor: null }));
const verify = (answer = anAuditVerify()) => http.get('/api/v1/audit/verify', ({ response }) => response(200).json(answer));

afterEach(() => vi.unstubAllGlobals());

describe('audit diff', () => {
  it('compares before and after field by field, the changed ones first', () => {
    expect(diffDetails(event.details)).toEqual([
      { field: 'cron', before: '0 0 9 * * *', after: '0 30 9 * * MON-FRI', change: 'changed' },
      { field: 'paused', before: false, after: false, change: 'same' },
    ]);
    expect(diffDetails({ before: {}, after: { name: 'x' } })?.[0]?.change).toBe('added');
    expect(diffDetails({ reason: 'bad password' })).toBeNull();
  });
});

describe('audit page', () => {
  it('filters through the URL-synced fields and shows the diff of an event', async () => {
    const fake = fakeApi(auditPage(), verify(anAuditVerify({ checked: 9 })));
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<AuditPage />, { role: 'ADMIN', path: '/audit', route: '/audit' });
    expect(await screen.findByText('Chain intact (9 events checked)')).toBeInTheDocument();
    await userEvent.click(screen.getByLabelText('Action', { selector: 'input' }));
    await userEvent.paste('schedule.update');
    await waitFor(() => expect(fake.calls.some((c) => new URL(c.url).searchParams.get('action') === 'schedule.update')).toBe(true));
    await userEvent.click(await screen.findByRole('button', { name: 'Diff of event 9' }));
    await screen.findByRole('dialog');
    const diff = await screen.findByRole('table', { name: 'Before and after' });
    expect(within(diff).getByText('0 30 9 * * MON-FRI')).toBeInTheDocument();
    // Changed fields only, until asked; the target by name when the details carry one.
    expect(within(diff).queryByText('paused')).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Show the 1 unchanged field' }));
    expect(within(diff).getByText('paused')).toBeInTheDocument();
  });

  it('names the target by its name, compares values by content and puts the changes first', async () => {
    const named = anAuditEvent({
      id: 11, actor: 'ada', action: 'schedule.update', target_type: 'schedule', target_id: '6', request_id: 'r2',
      details: {
        before: { name: 'flaky-etl', alerts: { on_failure: false, max_lateness_seconds: null }, timeout_seconds: null, cron: '0 */5 * * * *' },
        after: { name: 'flaky-etl', alerts: { max_lateness_seconds: null, on_failure: false }, timeout_seconds: 60, cron: '0 */5 * * * *' },
      },
    });
    vi.stubGlobal('fetch', fakeApi(auditPage([named]), verify()).fetch);
    renderScreen(<AuditPage />, { role: 'ADMIN', path: '/audit', route: '/audit' });
    expect(await screen.findByRole('link', { name: 'schedule flaky-etl' })).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Diff of event 11' }));
    expect(await screen.findByRole('dialog', { name: 'schedule.update of schedule flaky-etl by ada' })).toBeInTheDocument();
    const diff = await screen.findByRole('table', { name: 'Before and after' });
    const rows = within(diff).getAllByRole('row').slice(1);
    expect(rows.map((r) => r.getAttribute('data-change'))).toEqual(['changed']);
    expect(rows[0]).toHaveTextContent(/timeout_seconds.*—.*60/);
  });

  it('groups job.create by default: a run is one row with its count and a link to its events', async () => {
    const run = anAuditEvent({
      id: 2040, actor: 'ci-bot', action: 'job.create', target_type: 'job', target_id: '991',
      group: { count: 1000, first_id: 1041, last_id: 2040, first_at: '2026-12-05T09:12:00Z', last_at: '2026-12-05T09:14:00Z', href: '/api/v1/audit?actor=ci-bot&action=job.create&project=default&from_id=1041&to_id=2040' },
    });
    const fake = fakeApi(auditPage([run, event]), verify(anAuditVerify({ checked: 1001 })));
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<AuditPage />, { role: 'ADMIN', path: '/audit', route: '/audit' });
    const lists = () => fake.calls.map((c) => new URL(c.url)).filter((u) => u.pathname === '/api/v1/audit');
    const table = await screen.findByRole('table', { name: 'Audit events' });
    expect(lists().at(-1)?.searchParams.getAll('group')).toEqual(['job.create']);
    expect(lists().at(-1)?.searchParams.getAll('exclude_action')).toEqual([]);
    expect(await within(table).findByTestId('group-count')).toHaveTextContent('× 1,000');
    const link = within(table).getByRole('link', { name: '1,000 jobs: show the job.create events of ci-bot' });
    expect(link).toHaveTextContent('1,000 jobs');
    expect(link).toHaveAttribute('href', '/audit?actor=ci-bot&action=job.create&from_id=1041&to_id=2040&job_create=each');
    // A run has no Details of its own: its events do.
    expect(within(table).queryByRole('button', { name: 'Details of event 2040' })).toBeNull();

    await userEvent.click(link);
    await waitFor(() => expect(lists().at(-1)?.searchParams.get('from_id')).toBe('1041'));
    const opened = lists().at(-1);
    expect(opened?.searchParams.get('to_id')).toBe('2040');
    expect(opened?.searchParams.get('actor')).toBe('ci-bot');
    expect(opened?.searchParams.getAll('group')).toEqual([]);
    expect(screen.getByTestId('id-range')).toHaveTextContent('Events #1041 to #2040');
    expect(screen.getByLabelText('Actor')).toHaveValue('ci-bot');
    await userEvent.click(screen.getByRole('button', { name: 'Show the whole trail' }));
    await waitFor(() => expect(lists().at(-1)?.searchParams.getAll('group')).toEqual(['job.create']));
    expect(lists().at(-1)?.searchParams.get('actor')).toBeNull();

    const toggle = screen.getByRole('checkbox', { name: /Group job\.create/ });
    expect(toggle).toBeChecked();
    await userEvent.click(toggle);
    await waitFor(() => expect(lists().at(-1)?.searchParams.getAll('group')).toEqual([]));
  });

  it('keeps every filter typed within one debounce window', async () => {
    const fake = fakeApi(auditPage([]), verify(anAuditVerify({ checked: 0 })));
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<AuditPage />, { role: 'ADMIN', path: '/audit', route: '/audit' });
    await userEvent.click(screen.getByRole('textbox', { name: 'Target type' }));
    await userEvent.paste('schedule');
    await userEvent.click(screen.getByRole('textbox', { name: 'Target id' }));
    await userEvent.paste('1');
    await waitFor(() =>
      expect(
        fake.calls.some((c) => {
          const q = new URL(c.url).searchParams;
          return q.get('target_type') === 'schedule' && q.get('target_id') === '1';
        }),
        'both filters reach the request',
      ).toBe(true),
    );
  });

  it('a filtered empty trail says so and clears every filter, fields and dates included', async () => {
    const fake = fakeApi(auditPage([]), verify(anAuditVerify({ checked: 0 })));
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<AuditPage />, { role: 'ADMIN', path: '/audit', route: '/audit?actor=ada&at_after=2999-01-01T00%3A00%3A00Z' });
    expect(await screen.findByText('No audit events match these filters.')).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Actor' })).toHaveValue('ada');
    await userEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    expect(await screen.findByText(/No audit events yet/)).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Actor' })).toHaveValue('');
    expect(screen.getByLabelText('After')).toHaveValue('');
    const last = fake.calls.filter((c) => new URL(c.url).pathname === '/api/v1/audit').at(-1);
    expect(new URL(last?.url ?? '').searchParams.get('actor')).toBeNull();
    expect(new URL(last?.url ?? '').searchParams.get('at_after')).toBeNull();
  });

  it('shows a broken chain to an ADMIN', async () => {
    vi.stubGlobal('fetch', fakeApi(auditPage([]), verify(anAuditVerify({ ok: false, checked: 40, first_bad_id: 17 }))).fetch);
    renderScreen(<AuditPage />, { role: 'ADMIN' });
    expect(await screen.findByText(/first tampered or missing event is #17/)).toBeInTheDocument();
  });

  it('tells an ADMIN that the newest events were deleted', async () => {
    vi.stubGlobal(
      'fetch',
      fakeApi(
        auditPage([]),
        verify(anAuditVerify({ ok: false, checked: 7, truncated: true, head_id: 7, sealed_id: 7, anchor_id: 10 })),
      ).fetch,
    );
    renderScreen(<AuditPage />, { role: 'ADMIN' });
    expect(await screen.findByText(/newest events were deleted: the trail ends at #7, a signed checkpoint reaches #10/)).toBeInTheDocument();
    expect(screen.queryByText(/first tampered/)).not.toBeInTheDocument();
  });

  it('an OPERATOR reads the trail without the ADMIN-only verify call', async () => {
    const fake = fakeApi(auditPage([]));
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<AuditPage />, { role: 'OPERATOR' });
    expect(await screen.findByText(/No audit events yet: every change made through the API or this console/)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Clear filters' })).toBeNull();
    expect(fake.calls.some((c) => c.url.includes('/audit/verify'))).toBe(false);
  });

  it('offers the known actions and their prefixes, and links each target to its page (DELETED when gone)', async () => {
    const events: AuditEvent[] = [
      { ...event, id: 20, action: 'schedule.delete', target_type: 'schedule', target_id: '4', target_deleted: true },
      { ...event, id: 21, action: 'job.cancel', target_type: 'job', target_id: '2010', target_deleted: false },
      { ...event, id: 22, action: 'job.cancel', target_type: 'job', target_id: '17', target_deleted: true },
      { ...event, id: 23, action: 'project.update', target_type: 'project', target_id: 'payments', target_deleted: false },
      { ...event, id: 24, action: 'auth.logout', target_type: 'session', target_id: 'abc', target_deleted: null },
    ];
    const fake = fakeApi(auditPage(events));
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<AuditPage />, { role: 'OPERATOR', path: '/audit', route: '/audit' });
    const table = await screen.findByRole('table', { name: 'Audit events' });
    expect(within(table).getByRole('link', { name: 'job 2010' })).toHaveAttribute('href', '/jobs/2010');
    expect(within(table).getByRole('link', { name: 'project payments' })).toHaveAttribute('href', '/projects/payments');
    // A deleted schedule's page still says what it was; a purged job has no page left.
    const schedule = within(table).getByRole('link', { name: 'schedule 4' });
    expect(schedule).toHaveAttribute('href', '/schedules/4');
    expect(schedule.parentElement).toHaveTextContent(/deleted/i);
    expect(within(table).queryByRole('link', { name: 'job 17' })).toBeNull();
    expect(within(table).getByText('job 17').parentElement).toHaveTextContent(/deleted/i);
    expect(within(table).getByText('session abc')).toBeInTheDocument();
    expect(within(table).getAllByText(/^deleted$/i)).toHaveLength(2);

    await userEvent.click(screen.getByLabelText('Action', { selector: 'input' }));
    await userEvent.paste('job');
    expect(await screen.findByRole('option', { name: 'job.' })).toBeInTheDocument();
    expect(screen.getByRole('option', { name: 'job.bulk_retry' })).toBeInTheDocument();
    expect(screen.queryByRole('option', { name: 'schedule.update' })).toBeNull();
    await userEvent.click(screen.getByRole('option', { name: 'job.' }));
    await waitFor(() => expect(fake.calls.some((c) => new URL(c.url).searchParams.get('action') === 'job.')).toBe(true));
  });
});

describe('audit vocabulary', () => {
  it('has one prefix per resource and no page for targets without one', () => {
    expect(ACTION_PREFIXES).toContain('job.');
    expect(ACTION_PREFIXES).toContain('schedule.');
    expect(new Set(ACTION_PREFIXES).size).toBe(ACTION_PREFIXES.length);
    expect(AUDIT_ACTIONS).toContain('auth.login_failed');
    expect(targetPath({ target_type: 'lease', target_id: 'leader', target_deleted: null })).toBeNull();
    expect(targetPath({ target_type: 'job', target_id: null, target_deleted: null })).toBeNull();
  });

  it('opens the Users and Queues pages at the one user or queue an event names', () => {
    expect(targetPath({ target_type: 'user', target_id: '7', target_deleted: null })).toBe('/users?q=%237');
    expect(targetPath({ target_type: 'queue', target_id: 'billing/payments.sync', target_deleted: null })).toBe(
      '/queues?queue=billing%2Fpayments.sync',
    );
  });
});
