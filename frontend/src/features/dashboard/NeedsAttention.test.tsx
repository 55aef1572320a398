import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aProblem, aSchedule } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { NeedsAttention } from './NeedsAttention';

afterEach(() => vi.unstubAllGlobals());

describe('needs attention panel', () => {
  it('offers Retry when it fails to load, then names the failing schedule and its streak', async () => {
    let up = false;
    const base = aSchedule({ name: 'broken-import' });
    const failing = { ...base, health: { ...base.health, state: 'failing' as const, consecutive_failures: 2 } };
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/schedules', ({ response }) => up
        ? response(200).json({ items: [failing], next_cursor: null })
        : response.untyped(HttpResponse.json(aProblem(503, 'database unavailable'), { status: 503 }))),
    ).fetch);
    renderScreen(<NeedsAttention refetchInterval={false} />, { role: 'VIEWER' });
    const alert = await screen.findByRole('alert');
    up = true;
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    const table = await screen.findByRole('table', { name: 'Schedules needing attention' });
    expect(table).toHaveTextContent('broken-import');
    expect(table).toHaveTextContent('the last 2 runs died');
  });
});
