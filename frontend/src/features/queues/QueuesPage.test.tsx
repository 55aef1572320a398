import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useLocation } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Queue } from '../../api/types';
import { someWindowCounts, someWindows } from '../../test/factories';
import { fakeApi, fill, http, renderScreen } from '../../test/render';
import { QueuesPage } from './QueuesPage';

const aQueue = (project: string, name: string): Queue => ({
  project, name, paused: false, paused_at: null, paused_by: null, paused_reason: null, pending: 0, running: 0,
  concurrency_limit: null, per_key_limit: null, rate_limit_per_second: null,
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
});
