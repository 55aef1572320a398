import { screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Queue } from '../../api/types';
import { fakeApi, http, renderScreen } from '../../test/render';
import { PausedQueues } from './PausedQueues';

afterEach(() => vi.unstubAllGlobals());

const aQueue = (name: string, paused: boolean): Queue => ({
  project: 'default', name, paused, paused_reason: paused ? 'db failover' : null, paused_by: paused ? 'admin' : null,
  paused_at: paused ? '2026-12-05T08:00:00Z' : null, pending: 4, running: 0, concurrency_limit: null, per_key_limit: null,
  rate_limit_per_second: null, oldest_due_at: null,
});

describe('paused queues banner', () => {
  it('links each paused queue to that queue on the Queues page, not to the whole list', async () => {
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/queues', ({ response }) => response(200).json([aQueue('webhooks', true), aQueue('reports', false), aQueue('mail.out', true)])),
    ).fetch);
    renderScreen(<PausedQueues refetchInterval={false} />, { role: 'VIEWER' });
    const banner = await screen.findByRole('status');
    expect(banner).toHaveTextContent('2 queues are paused');
    expect(within(banner).getByRole('link', { name: 'default/webhooks' })).toHaveAttribute('href', '/queues?queue=default%2Fwebhooks');
    expect(within(banner).getByRole('link', { name: 'default/mail.out' })).toHaveAttribute('href', '/queues?queue=default%2Fmail.out');
    expect(within(banner).queryByRole('link', { name: 'default/reports' })).toBeNull();
    expect(within(banner).getAllByRole('link')).toHaveLength(2);
  });
});
