import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { HttpResponse } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { aProblem, someStats } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { DashboardPage } from './DashboardPage';

const stats = someStats({
  jobs_by_status: { PENDING: 4, RUNNING: 2, SUCCEEDED: 120, DEAD: 1, CANCELLED: 0 },
  throughput: [{ minute: '2026-11-29T08:00:00Z', succeeded: 10, failed: 1 }],
  leader: { owner: 'host:1:abc', fencing_token: 42, expires_at: new Date(Date.now() + 12_000).toISOString() },
  workers: [{ id: 'host:1:abc', host: 'host', pid: 1, heartbeat_at: new Date().toISOString(), running: 2 }],
});
const getStats = (answer = stats) => http.get('/api/v1/stats', ({ response }) => response(200).json(answer));
const noJobs = http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null }));

function setVisibility(state: 'visible' | 'hidden') {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
  document.dispatchEvent(new Event('visibilitychange'));
}

describe('dashboard', () => {
  beforeEach(() => localStorage.clear());
  afterEach(() => {
    vi.unstubAllGlobals();
    setVisibility('visible');
  });

  it('shows counts, leader and workers from /stats', async () => {
    vi.stubGlobal('fetch', fakeApi(getStats(), noJobs).fetch);
    renderScreen(<DashboardPage />, { role: 'VIEWER' });
    expect(await screen.findByLabelText('SUCCEEDED jobs')).toHaveTextContent('120');
    expect(screen.getByText('42')).toBeInTheDocument();
    expect(screen.getAllByText('host:1:abc').length).toBeGreaterThan(0);
    expect(screen.getByText('No dead jobs.')).toBeInTheDocument();
    // RUNNING 2 and the workers hold 2: nothing to explain.
    expect(screen.queryByTestId('running-hint')).toBeNull();
  });

  it('counts notification deliveries apart, asks the failures panel without them, and names a failing channel', async () => {
    const day = {
      ...stats,
      jobs_by_status: { ...stats.jobs_by_status, DEAD: 700 },
      deliveries_by_status: { DEAD: 685 },
      failing_channels: [{ id: 2, project: 'payments', name: 'oncall-slack', kind: 'slack', failures_in_a_row: 240, last_success_at: null }],
    };
    const fake = fakeApi(getStats(day), noJobs);
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<DashboardPage />, { role: 'VIEWER' });
    expect(await screen.findByLabelText('DEAD jobs')).toHaveTextContent('15');
    expect(screen.getByTestId('deliveries-DEAD')).toHaveTextContent('+685 notification deliveries');
    expect(screen.getByTestId('failing-channels')).toHaveTextContent(/oncall-slack \(slack, project payments\): 200\+ delivery attempts failed in a row,\s*last success never/);
    expect(screen.queryByRole('link', { name: 'Check the channels' }), 'channels are ADMIN-only').toBeNull();
    await waitFor(() => expect(fake.calls.some((c) => new URL(c.url).pathname === '/api/v1/jobs')).toBe(true));
    const failures = fake.calls.map((c) => new URL(c.url)).find((u) => u.pathname === '/api/v1/jobs');
    expect(failures?.searchParams.getAll('exclude_trigger')).toEqual(['notification']);
  });

  it('explains a RUNNING count above what the live workers report (heartbeat lag, or a dead worker whose lease has not expired)', async () => {
    const idle = { ...stats, jobs_by_status: { ...stats.jobs_by_status, RUNNING: 1 }, workers: stats.workers.map((w) => ({ ...w, running: 0 })) };
    vi.stubGlobal('fetch', fakeApi(getStats(idle), noJobs).fetch);
    renderScreen(<DashboardPage />, { role: 'VIEWER' });
    expect(await screen.findByLabelText('RUNNING jobs')).toHaveTextContent('1');
    expect(screen.getByTestId('running-hint')).toHaveTextContent(/live workers report 0 .*until its lease expires/);
  });

  it('shows a running chaos experiment as a banner to every role, with the manage link for admins only', async () => {
    const running = { ...stats, chaos: [{ id: 3, kind: 'fail_handler', expires_at: '2026-11-29T10:30:00Z' }] };
    vi.stubGlobal('fetch', fakeApi(getStats(running), noJobs).fetch);
    renderScreen(<DashboardPage />, { role: 'VIEWER' });
    expect(await screen.findByText('Chaos experiment running')).toBeInTheDocument();
    expect(screen.getByText(/fail_handler until/)).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'manage' }), 'viewers cannot manage experiments').toBeNull();
  });

  it('says "Reconnecting…" and marks the numbers stale when a poll fails', async () => {
    let up = true;
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/stats', ({ response }) =>
        // The API documents no 503 here: it is what a proxy or an unreachable database answers.
        up ? response(200).json(stats) : response.untyped(HttpResponse.json(aProblem(503, 'down'), { status: 503 }))),
      noJobs,
    ).fetch);
    const { client } = renderScreen(<DashboardPage />, { role: 'VIEWER' });
    await screen.findByLabelText('SUCCEEDED jobs');
    expect(screen.queryByText('Reconnecting…')).toBeNull();
    up = false;
    await act(() => client.refetchQueries({ queryKey: ['stats'] }));
    expect(await screen.findByText('Reconnecting…')).toBeInTheDocument();
    expect(screen.getByLabelText('SUCCEEDED jobs').closest('[data-stale]')).not.toBeNull();
    up = true;
    await act(() => client.refetchQueries({ queryKey: ['stats'] }));
    await waitFor(() => expect(screen.queryByText('Reconnecting…')).toBeNull());
    expect(screen.getByLabelText('SUCCEEDED jobs').closest('[data-stale]')).toBeNull();
  });

  it('has an interval picker with Pause, and says when polling pauses for a hidden tab', async () => {
    vi.stubGlobal('fetch', fakeApi(getStats(), noJobs).fetch);
    renderScreen(<DashboardPage />, { role: 'VIEWER' });
    for (const name of ['Pause', '1 s', '2 s', '5 s', '10 s']) expect(screen.getByRole('radio', { name })).toBeInTheDocument();
    await userEvent.click(screen.getByRole('radio', { name: 'Pause' }));
    expect(screen.getByText('Paused')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('radio', { name: '2 s' }));
    act(() => setVisibility('hidden'));
    expect(screen.getByText('Paused while the tab is hidden')).toBeInTheDocument();
  });

  it('polls /stats at the chosen interval and not while paused', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      const fake = fakeApi(getStats(), noJobs);
      vi.stubGlobal('fetch', fake.fetch);
      localStorage.setItem('cronplane.pollInterval', '1000');
      renderScreen(<DashboardPage />, { role: 'VIEWER' });
      await screen.findByLabelText('SUCCEEDED jobs');
      const count = () => fake.calls.filter((c) => c.url.endsWith('/stats')).length;
      const before = count();
      await act(() => vi.advanceTimersByTimeAsync(3100));
      expect(count()).toBeGreaterThanOrEqual(before + 2);
      act(() => setVisibility('hidden'));
      const hidden = count();
      await act(() => vi.advanceTimersByTimeAsync(5000));
      expect(count(), 'no polls while hidden').toBe(hidden);
    } finally {
      vi.useRealTimers();
    }
  });
});
