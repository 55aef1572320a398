import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useLocation } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aHandler, aJob, aProblem, aSchedule } from '../../test/factories';
import { ApiError } from '../../api/problem';
import { listJobsQueryOptions } from '../../api/queries/list-jobs';
import { fakeApi, fill, http, renderScreen } from '../../test/render';
import { Toaster } from '../../components/Toaster';
import { bulkSuccessText } from './api/bulk-jobs';
import { JobsPage } from './JobsPage';

const job = aJob({
  id: 12, handler: 'sleep', status: 'DEAD', attempt_count: 3, max_attempts: 3, schedule_id: 3, trigger: 'schedule',
  error: 'boom', finished_at: '2026-11-29T08:01:00Z',
});

function WithLocation() {
  const location = useLocation();
  return (
    <>
      <JobsPage />
      <output aria-label="url">{location.search}</output>
    </>
  );
}

afterEach(() => vi.unstubAllGlobals());

describe('jobs page', () => {
  it('reads its filters from the URL, so a shared link shows the same view', async () => {
    const fake = fakeApi(
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [job], next_cursor: null })),
      http.get('/api/v1/handlers', ({ response }) => response(200).json([aHandler({ name: 'sleep' })])),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<WithLocation />, { role: 'VIEWER', path: '/jobs', route: '/jobs?status=DEAD&status=CANCELLED&handler=sleep&schedule_id=3&q=boom' });
    expect(await screen.findByRole('link', { name: '#12' })).toHaveAttribute('href', '/jobs/12');
    const query = new URL(fake.calls.find((c) => new URL(c.url).pathname === '/api/v1/jobs')?.url ?? '').searchParams;
    expect(query.getAll('status')).toEqual(['DEAD', 'CANCELLED']);
    expect(Object.fromEntries([...query].filter(([k]) => k !== 'status'))).toEqual({ handler: 'sleep', schedule_id: '3', q: 'boom', exclude_trigger: 'notification' });
    expect(screen.getByRole('searchbox', { name: 'Search' })).toHaveValue('boom');
    expect(screen.getAllByTitle('2026-11-29 08:00:00 UTC').length).toBeGreaterThan(0);
  });

  it('offers a viewer no selection checkboxes (no bulk action is theirs), an operator one per row', async () => {
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [job], next_cursor: null })),
      http.get('/api/v1/handlers', ({ response }) => response(200).json([])),
    ).fetch);
    const viewer = renderScreen(<JobsPage />, { role: 'VIEWER', path: '/jobs', route: '/jobs' });
    expect(await screen.findByRole('link', { name: '#12' })).toBeInTheDocument();
    expect(screen.queryByRole('checkbox', { name: /^Select / })).toBeNull();
    viewer.unmount();
    renderScreen(<JobsPage />, { role: 'OPERATOR', path: '/jobs', route: '/jobs' });
    expect(await screen.findByRole('checkbox', { name: 'Select job #12' })).toBeInTheDocument();
    expect(screen.getByRole('checkbox', { name: 'Select every job on this page' })).toBeInTheDocument();
  });

  it('says what to do first on an empty instance, offering the submit link only to a role that may', async () => {
    const empty = () => fakeApi(
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null })),
      http.get('/api/v1/handlers', ({ response }) => response(200).json([])),
    ).fetch;
    vi.stubGlobal('fetch', empty());
    const viewer = renderScreen(<JobsPage />, { role: 'VIEWER', path: '/jobs', route: '/jobs' });
    expect(await screen.findByText('No jobs yet.')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: '/api/docs' })).toHaveAttribute('href', '/api/docs');
    expect(screen.queryByRole('link', { name: /Submit a first job/ })).toBeNull();
    viewer.unmount();
    vi.stubGlobal('fetch', empty());
    renderScreen(<JobsPage />, { role: 'OPERATOR', path: '/jobs', route: '/jobs' });
    expect(await screen.findByRole('link', { name: /Submit a first job/ })).toHaveAttribute('href', '/jobs/new');
  });

  it('says under the search box why the server refused a search, and offers no Retry of the same search', async () => {
    const tooBroad = 'the search is too broad to answer in time: add a filter or longer words';
    const fake = fakeApi(
      http.get('/api/v1/jobs', ({ response }) => response(422).json(aProblem(422, tooBroad, { q: ['Too broad to search in time.'] }))),
      http.get('/api/v1/jobs/count', ({ response }) => response(422).json(aProblem(422, tooBroad, { q: ['Too broad to search in time.'] }))),
      http.get('/api/v1/handlers', ({ response }) => response(200).json([])),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<JobsPage />, { role: 'VIEWER', path: '/jobs', route: '/jobs?q=1%202%203' });
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent(tooBroad);
    expect(within(alert).queryByRole('button', { name: 'Retry' })).toBeNull();
    expect(alert).not.toHaveTextContent('q:');
    expect(screen.getByRole('searchbox', { name: 'Search' })).toHaveAccessibleDescription('Too broad to search in time.');
  });

  it('stops polling a list the server refused: asking again would spend its search budget for the same answer', () => {
    const options = listJobsQueryOptions({ q: '1 2 3' }, 5000);
    const interval = options.refetchInterval as (query: { state: { error: unknown } }) => number | false;
    expect(interval({ state: { error: new ApiError({ title: 'Unprocessable Entity', status: 422 }) } })).toBe(false);
    expect(interval({ state: { error: new ApiError({ title: 'Service Unavailable', status: 503 }) } })).toBe(5000);
    expect(interval({ state: { error: null } })).toBe(5000);
  });

  it('writes filter changes back to the URL', async () => {
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null })),
      http.get('/api/v1/handlers', ({ response }) => response(200).json([])),
    ).fetch);
    renderScreen(<WithLocation />, { role: 'VIEWER', path: '/jobs', route: '/jobs' });
    expect(await screen.findByText('No jobs yet.')).toBeInTheDocument();
    await fill(screen.getByRole('searchbox', { name: 'Search' }), 'nightly');
    await waitFor(() => expect(screen.getByLabelText('url')).toHaveTextContent('?q=nightly'));
    await userEvent.click(screen.getByRole('button', { name: /^Running/ }));
    await waitFor(() => expect(screen.getByLabelText('url')).toHaveTextContent('status=RUNNING'));
    expect(await screen.findByText('No jobs match these filters.')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    await waitFor(() => expect(screen.getByLabelText('url')).not.toHaveTextContent('status=RUNNING'));
    expect(screen.getByLabelText('url')).not.toHaveTextContent('q=nightly');
    expect(await screen.findByText('No jobs yet.')).toBeInTheDocument();
    expect(screen.getByRole('searchbox', { name: 'Search' })).toHaveValue('');
  });

  it('status tabs carry the counts the server keeps, and a header click sorts through the API', async () => {
    const fake = fakeApi(
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [job], next_cursor: null })),
      http.get('/api/v1/jobs/status-counts', ({ response }) =>
        response(200).json({ counts: { WAITING: 0, PENDING: 16, RUNNING: 2, SUCCEEDED: 888, DEAD: 103, CANCELLED: 1 } })),
      http.get('/api/v1/handlers', ({ response }) => response(200).json([])),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<WithLocation />, { role: 'VIEWER', path: '/jobs', route: '/jobs?status=DEAD' });
    const dead = await screen.findByRole('button', { name: 'Dead 103' });
    expect(dead).toHaveAttribute('aria-pressed', 'true');
    expect(screen.getByRole('button', { name: 'All 1,010' })).toHaveAttribute('aria-pressed', 'false');
    const counted = fake.calls.find((c) => new URL(c.url).pathname === '/api/v1/jobs/status-counts');
    expect(Object.fromEntries(new URL(counted?.url ?? '').searchParams)).toEqual({ exclude_trigger: 'notification' });
    // The finish column sorts newest first, then oldest first; the order is in the URL and the request.
    const finished = screen.getByRole('columnheader', { name: /Finished/ });
    expect(finished).toHaveAttribute('aria-sort', 'none');
    expect(screen.getByRole('columnheader', { name: /Job/ })).toHaveAttribute('aria-sort', 'descending');
    await userEvent.click(within(finished).getByRole('button'));
    await waitFor(() => expect(screen.getByLabelText('url')).toHaveTextContent('sort=-finished_at'));
    await waitFor(() => expect(fake.calls.some((c) => new URL(c.url).searchParams.get('sort') === '-finished_at')).toBe(true));
    expect(screen.getByRole('columnheader', { name: /Finished/ })).toHaveAttribute('aria-sort', 'descending');
    expect(screen.getByText('Sorted by finish time: unfinished jobs are not listed.')).toBeInTheDocument();
    await userEvent.click(within(screen.getByRole('columnheader', { name: /Finished/ })).getByRole('button'));
    await waitFor(() => expect(screen.getByLabelText('url')).toHaveTextContent('sort=finished_at'));
    // A tab replaces the status filter; All clears it.
    await userEvent.click(screen.getByRole('button', { name: /^All/ }));
    await waitFor(() => expect(screen.getByLabelText('url')).not.toHaveTextContent('status='));
  });

  it('names each job\'s schedule from the row itself, says DELETED, and labels a chosen schedule found by id', async () => {
    // Schedule 907 is not in the picker's first answer (as one past the first 200 would not be).
    const rows = [
      aJob({ id: 21, schedule_id: 907, schedule_name: 'late-registry-entry', schedule_deleted: false, trigger: 'schedule' }),
      aJob({ id: 22, schedule_id: 5, schedule_name: 'retired-report', schedule_deleted: true, trigger: 'schedule' }),
    ];
    const fake = fakeApi(
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: rows, next_cursor: null })),
      http.get('/api/v1/handlers', ({ response }) => response(200).json([])),
      http.get('/api/v1/schedules', ({ response }) =>
        response(200).json({ items: [aSchedule({ id: 1, name: 'first-page-only' })], next_cursor: null })),
      http.get('/api/v1/schedules/{schedule_id}', ({ response }) => response(200).json(aSchedule({ id: 907, name: 'late-registry-entry' }))),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<WithLocation />, { role: 'VIEWER', path: '/jobs', route: '/jobs?schedule_id=907' });
    const table = await screen.findByRole('table', { name: 'Jobs' });
    expect(within(table).getByRole('link', { name: 'late-registry-entry' })).toHaveAttribute('href', '/schedules/907');
    const retired = within(table).getByRole('link', { name: 'retired-report' });
    expect(retired.parentElement).toHaveTextContent(/deleted/i);
    expect(within(table).getAllByText(/^deleted$/i)).toHaveLength(1);
    await waitFor(() => expect(screen.getByLabelText('Schedule', { selector: 'input' })).toHaveValue('late-registry-entry'));
    // Typing searches on the server (its #id and prefix search), not in a page fetched once.
    await fill(screen.getByLabelText('Schedule', { selector: 'input' }), 'x');
    await waitFor(() =>
      expect(fake.calls.some((c) => new URL(c.url).pathname === '/api/v1/schedules' && new URL(c.url).searchParams.get('q') === 'late-registry-entryx')).toBe(true),
    );
  });

  it('confirms a bulk action with a toast naming the counts the server reports', async () => {
    const rows = [aJob({ id: 31, status: 'PENDING' }), aJob({ id: 32, status: 'SUCCEEDED' })];
    const fake = fakeApi(
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: rows, next_cursor: null })),
      http.get('/api/v1/jobs/count', ({ response }) => response(200).json({ count: 2, limit: 10000 })),
      http.get('/api/v1/handlers', ({ response }) => response(200).json([])),
      http.get('/api/v1/schedules', ({ response }) => response(200).json({ items: [], next_cursor: null })),
      http.post('/api/v1/jobs/bulk/cancel', ({ response }) =>
        response(200).json({ matched: 2, changed: 1, skipped: [{ id: 32, reason: 'already finished' }] })),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(
      <>
        <JobsPage />
        <Toaster />
      </>,
      { role: 'OPERATOR', path: '/jobs', route: '/jobs' },
    );
    await userEvent.click(await screen.findByRole('checkbox', { name: 'Select every job on this page' }));
    await userEvent.click(screen.getByRole('button', { name: 'Cancel selected' }));
    await fill(await screen.findByRole('textbox', { name: /Reason/ }), 'stuck batch');
    await userEvent.click(screen.getByRole('button', { name: 'Cancel 2 jobs' }));
    expect(await screen.findByRole('status', { name: 'Notifications' })).toHaveTextContent('Cancelled 1 of 2 jobs (1 skipped)');
  });
});

describe('bulk bar offers only what applies', () => {
  const page = (rows: ReturnType<typeof aJob>[], route = '/jobs') => {
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: rows, next_cursor: null })),
      http.get('/api/v1/jobs/count', ({ response }) => response(200).json({ count: rows.length, limit: 10000 })),
      http.get('/api/v1/handlers', ({ response }) => response(200).json([])),
      http.get('/api/v1/schedules', ({ response }) => response(200).json({ items: [], next_cursor: null })),
    ).fetch);
    renderScreen(<JobsPage />, { role: 'OPERATOR', path: '/jobs', route });
  };

  it('a selection of dead jobs offers Retry, no Cancel', async () => {
    page([aJob({ id: 41, status: 'DEAD' }), aJob({ id: 42, status: 'DEAD' })], '/jobs?status=DEAD');
    await userEvent.click(await screen.findByRole('checkbox', { name: 'Select every job on this page' }));
    const bar = screen.getByRole('region', { name: 'Bulk actions' });
    expect(within(bar).getByRole('button', { name: 'Retry selected' })).toBeInTheDocument();
    expect(within(bar).queryByRole('button', { name: 'Cancel selected' })).toBeNull();
  });

  it('finished jobs only: no Cancel; succeeded only: says nothing applies', async () => {
    page([aJob({ id: 51, status: 'SUCCEEDED' }), aJob({ id: 52, status: 'CANCELLED' })]);
    await userEvent.click(await screen.findByRole('checkbox', { name: 'Select job #51' }));
    const bar = screen.getByRole('region', { name: 'Bulk actions' });
    expect(within(bar).queryByRole('button', { name: /selected$/ })).toBeNull();
    expect(bar).toHaveTextContent('Succeeded jobs can be neither cancelled nor retried.');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Select job #52' }));
    expect(within(bar).getByRole('button', { name: 'Retry selected' })).toBeInTheDocument();
    expect(within(bar).queryByRole('button', { name: 'Cancel selected' })).toBeNull();
  });
});

describe('bulk success text', () => {
  it('says what changed, of how many, and how many were skipped', () => {
    expect(bulkSuccessText('retry', { matched: 1, changed: 1, skipped: [] })).toBe('Retried 1 job');
    expect(bulkSuccessText('cancel', { matched: 1200, changed: 1200, skipped: [] })).toBe('Cancelled 1,200 jobs');
    expect(bulkSuccessText('cancel', { matched: 3, changed: 0, skipped: [{ id: 1, reason: 'x' }, { id: 2, reason: 'x' }, { id: 3, reason: 'x' }] })).toBe('Cancelled 0 of 3 jobs (3 skipped)');
  });
});
