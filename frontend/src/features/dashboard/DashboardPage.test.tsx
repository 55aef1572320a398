import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { HttpResponse } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { aProblem, someStats, someWindowCounts, someWindows } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { DashboardPage } from './DashboardPage';

const stats = someStats({
  jobs_by_status: { PENDING: 4, RUNNING: 2, SUCCEEDED: 120, DEAD: 1, CANCELLED: 0 },
  throughput: [{ minute: '2026-11-29T08:00:00Z', succeeded: 10, failed: 1 }],
  leader: { owner: 'host:1:abc', fencing_token: 42, expires_at: new Date(Date.now() + 12_000).toISOString() },
  workers: [{ id: 'host:1:abc', host: 'host', pid: 1, heartbeat_at: new Date().toISOString(), running: 2 }],
});
const getStats = (answer = stats) => http.get('/api/v1/stats', ({ response }) => response(200).json(answer));
const windows = someWindows({
  hour: { since: '2026-12-06T02:20:00Z', jobs: someWindowCounts({ succeeded: 7, dead: 3, failure_rate: 0.3 }), deliveries: someWindowCounts({ dead: 40 }) },
  day: { since: '2026-12-05T03:20:00Z', jobs: someWindowCounts({ succeeded: 90, dead: 10, cancelled: 2, failure_rate: 0.1 }), deliveries: someWindowCounts() },
  by_handler: [
    { handler: 'fail', day: someWindowCounts({ succeeded: 1, dead: 3, failure_rate: 0.75 }) },
    { handler: 'noop', day: someWindowCounts({ succeeded: 89, dead: 7, failure_rate: 7 / 96 }) },
  ],
  by_schedule: [
    { schedule_id: 6, project: 'default', name: 'flaky-etl', handler: 'fail', day: someWindowCounts({ succeeded: 1, dead: 3, failure_rate: 0.75 }) },
    { schedule_id: 9, project: 'default', name: null, handler: 'noop', day: someWindowCounts({ succeeded: 2, dead: 0, failure_rate: 0 }) },
  ],
  queues: [{ project: 'default', queue: 'reports', hour: someWindowCounts({ claimed: 4, claim_lag_mean_seconds: 2.5, claim_lag_max_seconds: 9 }), day: someWindowCounts({ claimed: 40, succeeded: 38, dead: 2, failure_rate: 0.05, claim_lag_mean_seconds: 1.25 }) }],
  leader_terms: [
    { owner: 'host:1:abc', fencing_token: 42, started_at: new Date(Date.now() - 600_000).toISOString(), ended_at: null, end_reason: null },
    { owner: 'host:2:def', fencing_token: 41, started_at: new Date(Date.now() - 7_200_000).toISOString(), ended_at: new Date(Date.now() - 600_000).toISOString(), end_reason: 'replaced by host:1:abc' },
  ],
});
const getWindows = (answer = windows) => http.get('/api/v1/stats/windows', ({ response }) => response(200).json(answer));
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
    vi.stubGlobal('fetch', fakeApi(getStats(), getWindows(), noJobs).fetch);
    renderScreen(<DashboardPage />, { role: 'VIEWER' });
    expect(await screen.findByLabelText('SUCCEEDED jobs')).toHaveTextContent('120');
    // The panels render once the cards are painted (DashboardPage: the first frame is the numbers).
    expect(await screen.findByText('No dead jobs.')).toBeInTheDocument();
    expect(screen.getAllByText('42').length, 'the fencing token, in the lease and its term').toBeGreaterThan(0);
    expect(screen.getAllByText('host:1:abc').length).toBeGreaterThan(0);
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
    const fake = fakeApi(getStats(day), getWindows(), noJobs);
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<DashboardPage />, { role: 'VIEWER' });
    expect(await screen.findByLabelText('DEAD jobs')).toHaveTextContent('15');
    expect(screen.getByTestId('deliveries-DEAD')).toHaveTextContent('+685 notification deliveries');
    expect(screen.getByTestId('failing-channels')).toHaveTextContent(/oncall-slack \(slack, project payments\): 200\+ delivery attempts failed in a row,\s*last success never/);
    // A VIEWER reads every channel's health on Notifications (review §5.15), so the notice leads there.
    expect(screen.getByRole('link', { name: 'Check the channels' })).toHaveAttribute('href', '/notifications');
    await waitFor(() => expect(fake.calls.some((c) => new URL(c.url).pathname === '/api/v1/jobs')).toBe(true));
    const failures = fake.calls.map((c) => new URL(c.url)).find((u) => u.pathname === '/api/v1/jobs');
    expect(failures?.searchParams.getAll('exclude_trigger')).toEqual(['notification']);
  });

  it('shows the last hour and 24 hours, failure rates, queue latency and the leader terms from /stats/windows', async () => {
    vi.stubGlobal('fetch', fakeApi(getStats(), getWindows(), noJobs).fetch);
    renderScreen(<DashboardPage />, { role: 'VIEWER' });
    expect(await screen.findByTestId('window-DEAD')).toHaveTextContent('3 last hour · 10 in 24 h');
    expect(screen.getByTestId('window-SUCCEEDED')).toHaveTextContent('7 last hour · 90 in 24 h');
    expect(screen.queryByTestId('window-PENDING'), 'a current state has no window').toBeNull();
    const byHandler = screen.getByRole('table', { name: 'Failure rate by handler, 24 hours' });
    expect(within(byHandler).getAllByRole('row')[1]).toHaveTextContent(/fail\s*3 of 4\s*75 %/);
    const bySchedule = screen.getByRole('table', { name: 'Failure rate by schedule, 24 hours' });
    expect(within(bySchedule).getByRole('link', { name: 'flaky-etl' })).toHaveAttribute('href', '/schedules/6');
    expect(within(bySchedule).getByText('deleted schedule #9')).toBeInTheDocument();
    expect(screen.getByTestId('latency-default/reports')).toHaveTextContent(/reports\s*4\s*2\.5 s\s*9\.0 s\s*1\.3 s\s*40\s*5\.0 %/);
    const terms = screen.getByRole('table', { name: 'Leader terms' });
    expect(within(terms).getAllByRole('row')[2]).toHaveTextContent(/41.*host:2:def.*replaced by host:1:abc/);
    expect(screen.getByTestId('leading-since')).toHaveTextContent('10 minutes ago');
    expect(screen.queryByText(/since this page opened/)).toBeNull();
  });

  it('shows the status cards when /stats/windows fails, and says so where the windows go', async () => {
    vi.stubGlobal('fetch', fakeApi(getStats(), noJobs).fetch);
    renderScreen(<DashboardPage />, { role: 'VIEWER' });
    expect(await screen.findByLabelText('SUCCEEDED jobs')).toHaveTextContent('120');
    expect(screen.queryByTestId('window-DEAD')).toBeNull();
    expect((await screen.findAllByRole('button', { name: /retry/i })).length).toBeGreaterThan(0);
  });

  it('explains a RUNNING count above what the live workers report (heartbeat lag, or a dead worker whose lease has not expired)', async () => {
    const idle = { ...stats, jobs_by_status: { ...stats.jobs_by_status, RUNNING: 1 }, workers: stats.workers.map((w) => ({ ...w, running: 0 })) };
    vi.stubGlobal('fetch', fakeApi(getStats(idle), getWindows(), noJobs).fetch);
    renderScreen(<DashboardPage />, { role: 'VIEWER' });
    expect(await screen.findByLabelText('RUNNING jobs')).toHaveTextContent('1');
    expect(screen.getByTestId('running-hint')).toHaveTextContent(/live workers report 0 .*until its lease expires/);
  });

  it('shows a running chaos experiment as a banner to every role, with the manage link for admins only', async () => {
    const running = { ...stats, chaos: [{ id: 3, kind: 'fail_handler', expires_at: '2026-11-29T10:30:00Z' }] };
    vi.stubGlobal('fetch', fakeApi(getStats(running), getWindows(), noJobs).fetch);
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
      getWindows(),
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
    vi.stubGlobal('fetch', fakeApi(getStats(), getWindows(), noJobs).fetch);
    renderScreen(<DashboardPage />, { role: 'VIEWER' });
    expect(await screen.findByRole('radio', { name: 'Pause' })).toBeInTheDocument();
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
      const fake = fakeApi(getStats(), getWindows(), noJobs);
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
