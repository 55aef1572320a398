import { act, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aSchedule } from '../../test/factories';
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
});
