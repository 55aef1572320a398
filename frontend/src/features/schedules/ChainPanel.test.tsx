import { screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, http, renderScreen } from '../../test/render';
import { ChainPanel } from './ChainPanel';

afterEach(() => vi.unstubAllGlobals());

const T = '2026-12-05T10:00:00Z';
const REASON = "upstream schedule 2 'transform' fire 2026-12-05T10:00:00Z: skipped_paused (paused from 2026-12-05T09:59:00Z to now)";

function open() {
  const fake = fakeApi(
    http.get('/api/v1/schedules/{schedule_id}/chain', ({ response }) =>
      response(200).json({
        id: 3,
        name: 'load',
        last_fire: { fire_time: T, outcome: 'skipped_upstream', job_id: null, job_status: null, lag_ms: null, reason: REASON },
        upstream: [
          {
            id: 2, name: 'transform', paused: true, deleted: false, run_when: 'succeeded', wait_seconds: 300,
            last_fire: { fire_time: T, outcome: 'skipped_paused', job_id: null, job_status: null, lag_ms: null, reason: 'paused from 09:59' },
          },
        ],
        downstream: [
          {
            id: 4, name: 'report', paused: false, deleted: false, run_when: null, wait_seconds: null,
            last_fire: { fire_time: T, outcome: 'waiting_upstream', job_id: 41, job_status: 'WAITING', lag_ms: null, reason: 'waiting for upstream schedule 3' },
          },
        ],
      }),
    ),
  );
  vi.stubGlobal('fetch', fake.fetch);
  renderScreen(<ChainPanel id={3} timeZone="UTC" linked />, { role: 'VIEWER' });
}

describe('schedule chain panel', () => {
  it('draws upstream and downstream with their states, fire times and why this fire was skipped', async () => {
    open();
    const up = await screen.findByRole('listitem', { name: 'upstream transform' });
    expect(within(up).getByText('paused')).toBeInTheDocument();
    expect(within(up).getByText('skipped_paused')).toBeInTheDocument();
    expect(within(up).getByText(/at most 300 s/)).toBeInTheDocument();
    const down = screen.getByRole('listitem', { name: 'downstream report' });
    expect(within(down).getByText('waiting_upstream')).toBeInTheDocument();
    expect(within(down).getByRole('link', { name: /job #41/ })).toHaveAttribute('href', '/jobs/41');
    expect(screen.getByText(REASON)).toBeInTheDocument();
    expect(screen.getAllByText(/2026-12-05 10:00/).length).toBeGreaterThan(0);
  });

  it('draws nothing for a schedule outside any chain', () => {
    const fake = fakeApi();
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<ChainPanel id={3} timeZone="UTC" linked={false} />, { role: 'VIEWER' });
    expect(screen.queryByRole('region', { name: 'Schedule chain' })).toBeNull();
    expect(fake.calls).toHaveLength(0);
  });
});
