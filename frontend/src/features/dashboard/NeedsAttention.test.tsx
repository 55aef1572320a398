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

  it('puts the cause beside the symptom: the last error headline, the paused queue', async () => {
    const base = aSchedule();
    const failing = { ...base, id: 2, name: 'flaky-etl', last_error: 'HandlerFailed: extract step failed', health: { ...base.health, state: 'failing' as const, consecutive_failures: 9 } };
    const late = { ...base, id: 3, name: 'webhook-fanout', queue: 'webhooks', health: { ...base.health, state: 'late' as const } };
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/schedules', ({ response }) => response(200).json({ items: [failing, late], next_cursor: null })),
      http.get('/api/v1/queues', ({ response }) =>
        response(200).json([{ project: 'default', name: 'webhooks', paused: true, paused_reason: null, paused_by: 'admin', paused_at: '2026-12-05T08:00:00Z', pending: 4, running: 0, concurrency_limit: null, rate_limit_per_second: null, per_key_limit: null, oldest_due_at: null }])),
    ).fetch);
    renderScreen(<NeedsAttention refetchInterval={false} />, { role: 'VIEWER' });
    const table = await screen.findByRole('table', { name: 'Schedules needing attention' });
    const flaky = within(table).getByText('flaky-etl').closest('tr') as HTMLElement;
    expect(flaky).toHaveTextContent('HandlerFailed: extract step failed');
    const fanout = within(table).getByText('webhook-fanout').closest('tr') as HTMLElement;
    expect(await within(fanout).findByRole('link', { name: 'webhooks' })).toHaveAttribute('href', '/queues?queue=default%2Fwebhooks');
    expect(fanout).toHaveTextContent('Queue webhooks is paused');
  });
});
