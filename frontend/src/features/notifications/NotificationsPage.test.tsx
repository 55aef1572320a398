import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aProblem } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { NotificationsPage } from './NotificationsPage';

const channel = {
  id: 4, name: 'oncall', project: 'default', kind: 'webhook' as const, url: 'https://hooks.example.com/x', address: null,
  events: ['job.dead' as const], created_at: '2026-12-01T10:00:00Z', has_secret: true,
  health: { state: 'ok' as const, last_success_at: '2026-12-01T10:01:00Z', last_failure_at: null, failures_in_a_row: 0, last_error: null },
};
const delivery = { id: 9, at: '2026-12-01T10:01:00Z', attempt: 1, duration_ms: 12, error: null, event_type: 'job.dead', job_id: 3, status_code: 200, webhook_id: 'msg_1' };

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('notifications page', () => {
  it('offers Retry when the channels fail to load', async () => {
    let up = false;
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/notification-channels', ({ response }) => up
        ? response(200).json({ items: [channel], next_cursor: null })
        : response.untyped(HttpResponse.json(aProblem(503, 'database unavailable'), { status: 503 }))),
    ).fetch);
    renderScreen(<NotificationsPage />, { role: 'ADMIN', path: '/notifications', route: '/notifications' });
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('database unavailable');
    up = true;
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Notification channels' })).toHaveTextContent('oncall');
  });

  it('polls the delivery log until paused, and offers Retry when the log fails to load', async () => {
    let deliveriesUp = false;
    const fake = fakeApi(
      http.get('/api/v1/notification-channels', ({ response }) => response(200).json({ items: [channel], next_cursor: null })),
      http.get('/api/v1/notification-channels/{channel_id}/deliveries', ({ response }) => deliveriesUp
        ? response(200).json({ items: [delivery], next_cursor: null })
        : response.untyped(HttpResponse.json(aProblem(503, 'database unavailable'), { status: 503 }))),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<NotificationsPage />, { role: 'ADMIN', path: '/notifications', route: '/notifications' });
    await userEvent.click(await screen.findByRole('button', { name: 'Deliveries to oncall' }));
    const log = await screen.findByRole('region', { name: 'Deliveries to oncall' });
    const alert = await within(log).findByRole('alert');
    deliveriesUp = true;
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await within(log).findByRole('table', { name: 'Delivery log' })).toHaveTextContent('job.dead');

    const reads = () => fake.calls.filter((c) => new URL(c.url).pathname.endsWith('/deliveries')).length;
    await userEvent.click(within(log).getByText('Pause', { exact: true }));
    expect(within(log).getByText('Paused', { exact: true })).toBeInTheDocument();
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const paused = reads();
    await act(() => vi.advanceTimersByTimeAsync(6000));
    expect(reads()).toBe(paused);
  });

  it('shows a broken channel as FAILING with its failures in a row, never-succeeded and the last error', async () => {
    const broken = {
      ...channel, id: 5, name: 'oncall-slack', kind: 'slack' as const,
      health: { state: 'failing' as const, last_success_at: null, last_failure_at: '2026-12-01T10:01:00Z', failures_in_a_row: 37, last_error: 'could not reach hooks.slack.invalid' },
    };
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/notification-channels', ({ response }) => response(200).json({ items: [channel, broken], next_cursor: null })),
    ).fetch);
    renderScreen(<NotificationsPage />, { role: 'ADMIN', path: '/notifications', route: '/notifications' });
    const table = await screen.findByRole('table', { name: 'Notification channels' });
    const row = within(table).getByText('oncall-slack').closest('tr') as HTMLElement;
    expect(within(row).getByText('FAILING')).toBeInTheDocument();
    expect(row).toHaveTextContent('37 failed in a row');
    expect(row).toHaveTextContent('last success never');
    expect(row).toHaveTextContent('Last error: could not reach hooks.slack.invalid');
    const healthy = within(table).getByText('oncall').closest('tr') as HTMLElement;
    expect(within(healthy).getByText('OK')).toBeInTheDocument();
  });

  it("shows a VIEWER each channel's health, and nothing the API keeps to ADMINs: no target, no actions, no form", async () => {
    // What the API lists to a member below ADMIN: no url, address, has_secret or last_error.
    const summary = {
      id: 5, name: 'oncall-slack', project: 'default', kind: 'slack' as const, events: ['job.dead' as const], created_at: '2026-12-01T10:00:00Z',
      health: { state: 'failing' as const, last_success_at: null, last_failure_at: '2026-12-01T10:01:00Z', failures_in_a_row: 12 },
    };
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/notification-channels', ({ response }) => response(200).json({ items: [summary], next_cursor: null })),
    ).fetch);
    renderScreen(<NotificationsPage />, { role: 'VIEWER', path: '/notifications', route: '/notifications' });
    const table = await screen.findByRole('table', { name: 'Notification channels' });
    const row = within(table).getByText('oncall-slack').closest('tr') as HTMLElement;
    expect(within(row).getByText('FAILING')).toBeInTheDocument();
    expect(row).toHaveTextContent('12 failed in a row');
    expect(row).toHaveTextContent('last success never');
    expect(within(table).queryByRole('columnheader', { name: 'Sends to' })).not.toBeInTheDocument();
    expect(within(table).queryByRole('columnheader', { name: 'Actions' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Send a test|Deliveries to|Delete/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('form', { name: 'New channel' })).not.toBeInTheDocument();
    expect(screen.getByText(/delivery log and its errors are for the project's ADMINs/)).toBeInTheDocument();
  });
});
