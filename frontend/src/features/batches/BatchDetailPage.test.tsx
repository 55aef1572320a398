import { screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aBatch, aJob, aProblem } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { BatchDetailPage } from './BatchDetailPage';

afterEach(() => vi.unstubAllGlobals());

describe('batch page', () => {
  it('shows the counts and state, links the callback and every job of the batch', async () => {
    const batch = aBatch({ id: 5, total: 3, succeeded: 2, dead: 1, state: 'failed', callback_job_id: 40, finished_at: '2026-11-29T08:05:00Z' });
    const jobs = [aJob({ id: 37, status: 'SUCCEEDED', batch_id: 5 }), aJob({ id: 38, status: 'SUCCEEDED', batch_id: 5 }), aJob({ id: 39, status: 'DEAD', batch_id: 5 })];
    vi.stubGlobal(
      'fetch',
      fakeApi(
        http.get('/api/v1/batches/{batch_id}', ({ params, response }) => response(200).json({ ...batch, id: Number(params.batch_id) })),
        http.get('/api/v1/batches/{batch_id}/jobs', ({ response }) => response(200).json({ items: jobs, next_cursor: null })),
      ).fetch,
    );
    renderScreen(<BatchDetailPage />, { role: 'VIEWER', path: '/batches/:id', route: '/batches/5' });
    expect(await screen.findByRole('heading', { name: 'Batch #5' })).toBeInTheDocument();
    const fields = await screen.findByRole('table', { name: 'Batch fields' });
    expect(within(fields).getByText('failed')).toBeInTheDocument();
    expect(within(fields).getByRole('link', { name: 'job #40' })).toHaveAttribute('href', '/jobs/40');
    expect(screen.getByLabelText('succeeded jobs')).toHaveTextContent('2');
    expect(screen.getByLabelText('dead jobs')).toHaveTextContent('1');
    const table = await screen.findByRole('table', { name: 'Jobs of the batch' });
    expect(within(table).getByRole('link', { name: '#39' })).toHaveAttribute('href', '/jobs/39');
    expect(within(table).getAllByText('SUCCEEDED')).toHaveLength(2);
  });

  it('says a batch of another project or none at all is not found', async () => {
    vi.stubGlobal(
      'fetch',
      fakeApi(
        http.get('/api/v1/batches/{batch_id}', ({ response }) => response(404).json(aProblem(404, 'batch 9 not found'))),
        http.get('/api/v1/batches/{batch_id}/jobs', ({ response }) => response(404).json(aProblem(404, 'batch 9 not found'))),
      ).fetch,
    );
    renderScreen(<BatchDetailPage />, { role: 'VIEWER', path: '/batches/:id', route: '/batches/9' });
    expect((await screen.findAllByText(/batch 9 not found/)).length).toBeGreaterThan(0);
  });
});
