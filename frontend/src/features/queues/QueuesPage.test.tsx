import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useLocation } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Queue } from '../../api/types';
import { someWindowCounts, someWindows } from '../../test/factories';
import { fakeApi, fill, http, renderScreen } from '../../test/render';
import { OldestWait, QueuesPage } from './QueuesPage';

const aQueue = (project: string, name: string): Queue => ({
  project, name, paused: false, paused_at: null, paused_by: null, paused_reason: null, pending: 0, running: 0,
  concurrency_limit: null, per_key_limit: null, oldest_due_at: null, rate_limit_per_second: null,
});

function WithLocation() {
  const location = useLocation();
  return (
    <>
      <QueuesPage />
      <output aria-label="url">{location.search}</output>
    </>
  );
}

afterEach(() => vi.unstubAllGlobals());

const queues = [aQueue('billing', 'payments.sync'), aQueue('default', 'payments.sync'), aQueue('default', 'reports')];

describe('queues page', () => {
  it('shows each queue\'s last hour on arrival, from the server\'s windows (not the samples of this tab)', async () => {
    const windows = someWindows({
      queues: [{
        project: 'default', queue: 'reports',
        hour: someWindowCounts({ succeeded: 12, dead: 3, claimed: 15, claim_lag_mean_seconds: 1.5, claim_lag_max_seconds: 42 }),
        day: someWindowCounts({ succeeded: 100, dead: 25, claimed: 125, failure_rate: 0.2 }),
      }],
    });
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/queues', ({ response }) => response(200).json(queues)),
      http.get('/api/v1/stats/windows', ({ response }) => response(200).json(windows)),
    ).fetch);
    renderScreen(<QueuesPage />, { role: 'VIEWER' });
    const table = await screen.findByRole('table', { name: 'Queues' });
    const reports = table.querySelector('[data-queue="default/reports"]') as HTMLElement;
    await waitFor(() => expect(within(reports).getByTestId('last-hour')).toHaveTextContent('12 succeeded · 3 dead'));
    expect(within(reports).getByTestId('last-hour')).toHaveTextContent('claim lag 1.5 s (max 42 s)24 h: failure rate 20 %');
    const quiet = table.querySelector('[data-queue="billing/payments.sync"]') as HTMLElement;
    expect(within(quiet).getByTestId('last-hour')).toHaveTextContent('nothing in 24 h');
  });


  it('draws the last hour of depth, running and wait from the leader\'s samples on the first render', async () => {
    const samples = Array.from({ length: 60 }, (_, i) => ({
      at: new Date(Date.UTC(2030, 0, 1, 0, i)).toISOString(), ready: i === 30 ? 12 : 2, running: 1, latency_seconds: i === 30 ? 95 : 0, completed: 3,
    }));
    const rows = [{ ...aQueue('default', 'reports'), pending: 2, running: 1 }, aQueue('default', 'fresh')];
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/queues', ({ response }) => response(200).json(rows)),
      http.get('/api/v1/queues/history', ({ response }) => response(200).json({
        items: [{ project: 'default', name: 'reports', samples }, { project: 'default', name: 'fresh', samples: [] }], next_cursor: null,
      })),
    ).fetch);
    renderScreen(<QueuesPage />, { role: 'VIEWER' });
    const table = await screen.findByRole('table', { name: 'Queues' });
    const ready = await within(table).findByRole('img', { name: 'Ready in default/reports: 2 now, peak 12 over the last 60 min' });
    expect(ready).toHaveAttribute('data-samples', '60');
    expect(within(table).getByRole('img', { name: 'Running in default/reports: 1 now, peak 1 over the last 60 min' })).toHaveAttribute('data-samples', '60');
    expect(within(table).getByRole('img', { name: 'Oldest due wait in default/reports, peak 1 min 35 s over the last 60 min' })).toBeInTheDocument();
    // A queue the leader has not sampled yet shows its current count alone.
    expect(within(table).getByRole('img', { name: 'Pending in default/fresh: 0' })).toHaveAttribute('data-samples', '1');
  });

  it('opens at the one queue a link names, and shows them all again on request', async () => {
    vi.stubGlobal('fetch', fakeApi(http.get('/api/v1/queues', ({ response }) => response(200).json(queues))).fetch);
    renderScreen(<WithLocation />, { role: 'VIEWER', path: '/queues', route: '/queues?queue=billing%2Fpayments.sync' });
    const table = await screen.findByRole('table', { name: 'Queues' });
    expect(within(table).getAllByRole('row')).toHaveLength(2); // the header and billing/payments.sync
    expect(table.querySelector('[data-queue="billing/payments.sync"]')).not.toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Show all queues' }));
    await waitFor(() => expect(within(table).getAllByRole('row')).toHaveLength(4));
    expect(screen.getByLabelText('url')).toHaveTextContent(/^$/);
  });

  it('searches from the URL and writes the search back to it', async () => {
    vi.stubGlobal('fetch', fakeApi(http.get('/api/v1/queues', ({ response }) => response(200).json(queues))).fetch);
    renderScreen(<WithLocation />, { role: 'VIEWER', path: '/queues', route: '/queues?q=rep' });
    const table = await screen.findByRole('table', { name: 'Queues' });
    expect(within(table).getAllByRole('row')).toHaveLength(2);
    expect(screen.getByRole('searchbox', { name: 'Search' })).toHaveValue('rep');
    await userEvent.clear(screen.getByRole('searchbox', { name: 'Search' }));
    await fill(screen.getByRole('searchbox', { name: 'Search' }), 'nothing-like-it');
    await waitFor(() => expect(screen.getByLabelText('url')).toHaveTextContent('?q=nothing-like-it'));
    expect(await screen.findByText('No queue matches these filters.')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    expect(within(await screen.findByRole('table', { name: 'Queues' })).getAllByRole('row')).toHaveLength(4);
    expect(screen.getByLabelText('url')).toHaveTextContent(/^$/);
    expect(screen.getByRole('searchbox', { name: 'Search' })).toHaveValue('');
  });

  it('with no queues at all, says where queues come from and offers a first job to a role that may submit one', async () => {
    vi.stubGlobal('fetch', fakeApi(http.get('/api/v1/queues', ({ response }) => response(200).json([]))).fetch);
    const { unmount } = renderScreen(<QueuesPage />, { role: 'OPERATOR', path: '/queues', route: '/queues?q=pay' });
    expect(await screen.findByText('No queues yet: a queue appears once a job or schedule names it.')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Submit a job to a queue' })).toHaveAttribute('href', '/jobs/new');
    expect(screen.queryByRole('button', { name: 'Clear filters' })).toBeNull();
    unmount();
    renderScreen(<QueuesPage />, { role: 'VIEWER', path: '/queues', route: '/queues' });
    expect(await screen.findByText('No queues yet: a queue appears once a job or schedule names it.')).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Submit a job to a queue' })).toBeNull();
  });

  it('shows "—" for unlimited (one dash when a queue has no limit at all), and no Actions column to a viewer', async () => {
    const limited = { ...aQueue('default', 'reports'), concurrency_limit: 2, rate_limit_per_second: 0.5 };
    const rows = [aQueue('default', 'payments.sync'), limited];
    vi.stubGlobal('fetch', fakeApi(http.get('/api/v1/queues', ({ response }) => response(200).json(rows))).fetch);
    const { unmount } = renderScreen(<QueuesPage />, { role: 'VIEWER' });
    const table = await screen.findByRole('table', { name: 'Queues' });
    const cell = (name: string) => within(table.querySelector(`[data-queue="default/${name}"]`) as HTMLElement).getByTestId('limits');
    expect(cell('payments.sync')).toHaveTextContent(/^—$/);
    expect(cell('reports')).toHaveTextContent('concurrency 2 · per key — · rate 0.5/s');
    expect(table).not.toHaveTextContent('unlimited');
    expect(within(table).queryByRole('columnheader', { name: 'Actions' })).toBeNull();
    unmount();
    renderScreen(<QueuesPage />, { role: 'OPERATOR' });
    const operators = await screen.findByRole('table', { name: 'Queues' });
    expect(within(operators).getByRole('columnheader', { name: 'Actions' })).toBeInTheDocument();
    expect(await within(operators).findByRole('button', { name: 'Pause default/reports' })).toBeInTheDocument();
  });

  it('says how long the oldest due job of a queue has waited, on arrival, and nothing when none is due', async () => {
    const minutesAgo = new Date(Date.now() - (3 * 60 + 5) * 1000).toISOString();
    const rows = [{ ...aQueue('default', 'reports'), pending: 4, oldest_due_at: minutesAgo }, { ...aQueue('default', 'later'), pending: 2 }];
    vi.stubGlobal('fetch', fakeApi(http.get('/api/v1/queues', ({ response }) => response(200).json(rows))).fetch);
    renderScreen(<QueuesPage />, { role: 'VIEWER' });
    const table = await screen.findByRole('table', { name: 'Queues' });
    const row = (name: string) => table.querySelector(`[data-queue="default/${name}"]`) as HTMLElement;
    expect(within(row('reports')).getByTestId('oldest-wait')).toHaveTextContent(/^oldest waits 3 min [5-9] s$/);
    expect(within(row('later')).queryByTestId('oldest-wait')).toBeNull();
  });

  it('never shows a negative wait when the browser\'s clock is behind the server\'s', () => {
    const { container } = renderScreen(<OldestWait queue={{ oldest_due_at: '2030-01-01T00:00:10Z' }} now={Date.parse('2030-01-01T00:00:00Z')} />);
    expect(container).toHaveTextContent('oldest waits 0.0 s');
  });
});
