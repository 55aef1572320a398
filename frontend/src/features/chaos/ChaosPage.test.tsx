import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aChaosExperiment, aHandler } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { ChaosPage } from './ChaosPage';

afterEach(() => vi.unstubAllGlobals());

describe('chaos page', () => {
  it('starts an experiment with kind, duration and params, and stops an active one', async () => {
    const active = aChaosExperiment({ id: 4, kind: 'leader_stepdown', expires_at: '2026-11-29T09:00:00Z', created_by: 'ada' });
    const fake = fakeApi(
      http.get('/api/v1/chaos/experiments', ({ response }) => response(200).json({ items: [active], next_cursor: null })),
      http.get('/api/v1/handlers', ({ response }) => response(200).json([aHandler({ name: 'sleep' })])),
      http.post('/api/v1/chaos/experiments', ({ response }) =>
        response(201).json({ ...active, id: 5, kind: 'fail_handler', params: { handler: 'sleep', fraction: 0.5 } })),
      http.delete('/api/v1/chaos/experiments/{experiment_id}', ({ response }) => response(204).empty()),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<ChaosPage />, { role: 'ADMIN' });
    // Each kind says what it does before it is started.
    expect(screen.getByText(/The current leader resigns/)).toBeVisible();
    await userEvent.click(screen.getByRole('combobox', { name: 'Kind' }));
    await userEvent.click(await screen.findByRole('option', { name: 'Fail a handler (fraction of runs)' }));
    expect(screen.getByText(/That fraction of the handler's attempts fail/)).toBeVisible();
    expect(screen.queryByText(/The current leader resigns/)).toBeNull();
    await userEvent.click(screen.getByRole('combobox', { name: 'Handler' }));
    await userEvent.click(await screen.findByRole('option', { name: 'sleep' }));
    await userEvent.click(screen.getByRole('button', { name: 'Start experiment' }));
    await waitFor(() => expect(fake.calls.some((c) => c.method === 'POST')).toBe(true));
    expect(await fake.calls.find((c) => c.method === 'POST')?.json()).toEqual({ kind: 'fail_handler', duration_seconds: 60, params: { handler: 'sleep', fraction: 0.5 } });

    await userEvent.click(await screen.findByRole('button', { name: 'Stop' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Stop experiment' }));
    await waitFor(() => expect(fake.calls.some((c) => c.method === 'DELETE')).toBe(true));
  });

  it('before any experiment, suggests a safe first one instead of a bare empty list', async () => {
    vi.stubGlobal(
      'fetch',
      fakeApi(
        http.get('/api/v1/chaos/experiments', ({ response }) => response(200).json({ items: [], next_cursor: null })),
        http.get('/api/v1/handlers', ({ response }) => response(200).json([])),
      ).fetch,
    );
    renderScreen(<ChaosPage />, { role: 'ADMIN' });
    expect(await screen.findByText(/No experiments have run\. Start one above — a leader step-down for 60 seconds/)).toBeInTheDocument();
    expect(screen.queryByRole('table', { name: 'Experiments' })).toBeNull();
  });
});
