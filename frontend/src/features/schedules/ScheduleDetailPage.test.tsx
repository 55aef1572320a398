import { act, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aJob, aSchedule } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { ScheduleDetailPage } from './ScheduleDetailPage';

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const reads = (calls: Request[]) => calls.filter((c) => new URL(c.url).pathname === '/api/v1/schedules/3').length;

function open(deleted_at: string | null) {
  const fake = fakeApi(
    http.get('/api/v1/schedules/{schedule_id}', ({ response }) => response(200).json(aSchedule({ id: 3, name: 'nightly', deleted_at }))),
    http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null })),
  );
  vi.stubGlobal('fetch', fake.fetch);
  vi.useFakeTimers({ shouldAdvanceTime: true });
  renderScreen(<ScheduleDetailPage />, { role: 'VIEWER', path: '/schedules/:id', route: '/schedules/3' });
  return fake;
}

describe('schedule detail page', () => {
  it('stops polling once the schedule is deleted, and drops the refresh control', async () => {
    const fake = open('2026-12-02T10:00:00Z');
    expect(await screen.findByRole('heading', { name: 'nightly' })).toBeInTheDocument();
    expect(screen.queryByText('Refresh')).toBeNull();
    const before = reads(fake.calls);
    await act(() => vi.advanceTimersByTimeAsync(11_000));
    expect(reads(fake.calls)).toBe(before);
  });

  it('keeps polling a live schedule', async () => {
    const fake = open(null);
    expect(await screen.findByRole('heading', { name: 'nightly' })).toBeInTheDocument();
    const before = reads(fake.calls);
    await act(() => vi.advanceTimersByTimeAsync(11_000));
    expect(reads(fake.calls)).toBeGreaterThan(before);
  });

  it("shows the fire written ahead as the schedule's next run, and a fire whose time has come as PENDING", async () => {
    const next = '2026-12-02T10:00:50Z';
    const ahead = aJob({ id: 12, status: 'PENDING', trigger: 'schedule', schedule_id: 3, fire_time: next, run_at: next });
    // Not started although its time has come (the schedule's next run has moved on): a late run.
    const late = aJob({ id: 11, status: 'PENDING', trigger: 'schedule', schedule_id: 3, fire_time: '2026-12-02T09:59:50Z' });
    const done = aJob({ id: 10, status: 'SUCCEEDED', trigger: 'schedule', schedule_id: 3, fire_time: '2026-12-02T09:58:50Z', attempt_count: 1 });
    const retried = aJob({ id: 9, status: 'PENDING', trigger: 'schedule', schedule_id: 3, fire_time: next, attempt_count: 1 });
    vi.stubGlobal(
      'fetch',
      fakeApi(
        http.get('/api/v1/schedules/{schedule_id}', ({ response }) => response(200).json(aSchedule({ id: 3, name: 'nightly', next_run_at: '2026-12-02T10:00:50.000Z' }))),
        http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [ahead, late, done, retried], next_cursor: null })),
      ).fetch,
    );
    renderScreen(<ScheduleDetailPage />, { role: 'VIEWER', path: '/schedules/:id', route: '/schedules/3' });
    const table = await screen.findByRole('table', { name: 'Runs' });
    const row = (id: number) => within(table).getByRole('link', { name: `#${id}` }).closest('tr') as HTMLElement;
    await within(row(12)).findByText('Next run');
    expect(within(row(12)).queryByText('PENDING'), 'the written-ahead fire is not shown as a pending run').toBeNull();
    expect(within(row(11)).getByText('PENDING')).toBeInTheDocument();
    expect(within(row(10)).getByText('SUCCEEDED')).toBeInTheDocument();
    expect(within(row(9)).getByText('PENDING'), 'an attempted job is a run, not the next one').toBeInTheDocument();
    expect(within(table).getAllByText('Next run')).toHaveLength(1);
  });
});
