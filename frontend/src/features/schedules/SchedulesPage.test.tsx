import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useLocation } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aSchedule } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { SchedulesPage } from './SchedulesPage';

function WithLocation() {
  const location = useLocation();
  return (
    <>
      <SchedulesPage />
      <output aria-label="url">{location.search}</output>
    </>
  );
}

afterEach(() => vi.unstubAllGlobals());

const page = (count: number, limit = 10000) =>
  fakeApi(
    http.get('/api/v1/schedules', ({ response }) =>
      response(200).json({ items: [aSchedule({ id: 6, name: 'nightly-report' })], next_cursor: 'c2' })),
    http.get('/api/v1/schedules/count', ({ response }) => response(200).json({ count, limit })),
    http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null })),
  );

describe('schedules page', () => {
  it('says why beside the state: the paused queue (linked), the last error; and sorts by a header', async () => {
    const fake = fakeApi(
      http.get('/api/v1/schedules', ({ response }) =>
        response(200).json({
          items: [
            aSchedule({ id: 7, name: 'webhook-fanout', queue: 'webhooks', health: { state: 'late', since: '2026-12-05T08:00:00Z', consecutive_failures: 0, last_success_at: null, alerts: {} } }),
            aSchedule({ id: 8, name: 'flaky-etl', last_error: 'HandlerFailed: extract step failed', health: { state: 'failing', since: '2026-12-05T08:00:00Z', consecutive_failures: 4, last_success_at: null, alerts: {} } }),
            aSchedule({ id: 9, name: 'weekly-digest', paused: true, paused_until: '2026-12-12T00:00:00Z', pause_reason: 'holiday freeze' }),
          ],
          next_cursor: null,
        })),
      http.get('/api/v1/schedules/count', ({ response }) => response(200).json({ count: 3, limit: 10000 })),
      http.get('/api/v1/queues', ({ response }) =>
        response(200).json([{ project: 'default', name: 'webhooks', paused: true, paused_reason: 'vendor outage', paused_by: 'admin', paused_at: '2026-12-05T08:00:00Z', pending: 4, running: 0, concurrency_limit: null, rate_limit_per_second: null, per_key_limit: null, oldest_due_at: null }])),
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null })),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<WithLocation />, { role: 'VIEWER', path: '/schedules', route: '/schedules' });
    const queueLink = await screen.findByRole('link', { name: 'webhooks' });
    expect(queueLink).toHaveAttribute('href', '/queues?queue=default%2Fwebhooks');
    expect(queueLink.closest('[data-cause]')).toHaveTextContent('Queue webhooks is paused: vendor outage');
    expect(screen.getByText('HandlerFailed: extract step failed')).toBeInTheDocument();
    expect(screen.getByText(/^Paused until 2026-12-12 00:00:00 UTC: holiday freeze$/)).toBeInTheDocument();
    await userEvent.click(within(screen.getByRole('columnheader', { name: /Name/ })).getByRole('button'));
    await waitFor(() => expect(screen.getByLabelText('url')).toHaveTextContent('?sort=name'));
    await waitFor(() => expect(fake.calls.some((c) => new URL(c.url).pathname === '/api/v1/schedules' && new URL(c.url).searchParams.get('sort') === 'name')).toBe(true));
    expect(screen.getByRole('columnheader', { name: /Name/ })).toHaveAttribute('aria-sort', 'ascending');
  });

  it('shows the total the server counted, with the same filters as the list', async () => {
    const fake = page(2004);
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<SchedulesPage />, { role: 'VIEWER', path: '/schedules', route: '/schedules?q=report&paused=true&created_after=2026-11-01T00%3A00%3A00Z' });
    expect(await screen.findByText('Page 1 of 2,004 schedules')).toBeInTheDocument();
    const counted = fake.calls.find((c) => new URL(c.url).pathname === '/api/v1/schedules/count');
    expect(Object.fromEntries(new URL(counted?.url ?? '').searchParams)).toEqual({ q: 'report', paused: 'true', created_after: '2026-11-01T00:00:00Z' });
    const listed = fake.calls.find((c) => new URL(c.url).pathname === '/api/v1/schedules');
    expect(new URL(listed?.url ?? '').searchParams.get('created_after')).toBe('2026-11-01T00:00:00Z');
    expect(screen.getByLabelText('Created after')).not.toHaveValue('');
    expect(screen.getByRole('link', { name: 'nightly-report' })).toHaveAttribute('href', '/schedules/6');
    // The next run in a few characters ("in 3 h", "5 d ago"), its exact time in the schedule's zone and UTC on hover.
    expect(screen.getByTitle(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC · \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/)).toHaveTextContent(/^(in \d+ (s|min|h|d)|\d+ (s|min|h|d) ago|now)$/);
  });

  it('an empty filtered list offers to clear the filters and keeps the page size', async () => {
    const fake = fakeApi(
      http.get('/api/v1/schedules', ({ request, response }) =>
        response(200).json({ items: new URL(request.url).searchParams.get('q') ? [] : [aSchedule({ id: 6, name: 'nightly-report' })], next_cursor: null })),
      http.get('/api/v1/schedules/count', ({ response }) => response(200).json({ count: 0, limit: 10000 })),
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null })),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<WithLocation />, { role: 'VIEWER', path: '/schedules', route: '/schedules?q=nothing&paused=true&limit=10' });
    expect(await screen.findByText('No schedules match these filters.')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    expect(await screen.findByRole('link', { name: 'nightly-report' })).toBeInTheDocument();
    expect(screen.getByLabelText('url')).toHaveTextContent(/^\?limit=10$/);
    expect(screen.getByRole('searchbox', { name: 'Search' })).toHaveValue('');
  });

  it('says "more than N" when the server stopped counting at its cap', async () => {
    vi.stubGlobal('fetch', page(10001).fetch);
    renderScreen(<SchedulesPage />, { role: 'VIEWER', path: '/schedules', route: '/schedules' });
    expect(await screen.findByText('Page 1 of more than 10,000 schedules')).toBeInTheDocument();
  });

  it('starts the empty state\'s sentence with a capital when the role may not create one', async () => {
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/schedules', ({ response }) => response(200).json({ items: [], next_cursor: null })),
      http.get('/api/v1/schedules/count', ({ response }) => response(200).json({ count: 0, limit: 10000 })),
    ).fetch);
    renderScreen(<SchedulesPage />, { role: 'VIEWER', path: '/schedules', route: '/schedules' });
    const empty = await screen.findByText('No schedules yet.');
    expect(empty.parentElement).toHaveTextContent(/^No schedules yet\. Read the API at \/api\/docs\.$/);
    expect(screen.queryByRole('link', { name: 'Create a schedule' })).toBeNull();
  });

  it('still pages when the count fails', async () => {
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/schedules', ({ response }) =>
        response(200).json({ items: [aSchedule({ id: 6, name: 'nightly-report' })], next_cursor: 'c2' })),
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null })),
    ).fetch);
    renderScreen(<SchedulesPage />, { role: 'VIEWER', path: '/schedules', route: '/schedules' });
    await waitFor(() => expect(screen.getByText('Page 1')).toBeInTheDocument());
    expect(screen.getByRole('button', { name: 'Next page' })).toBeEnabled();
  });
});
