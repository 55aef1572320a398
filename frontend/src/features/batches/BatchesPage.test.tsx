import { screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aBatch } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { BatchesPage } from './BatchesPage';

afterEach(() => vi.unstubAllGlobals());

describe('batches page', () => {
  it('lists batches with their state, progress and callback, each linking to its page', async () => {
    const running = aBatch({ id: 7, total: 10, pending: 4, running: 2, succeeded: 3, dead: 1, callback_job_id: 99 });
    const done = aBatch({ id: 6, total: 2, succeeded: 2, state: 'succeeded', finished_at: '2026-11-29T08:05:00Z' });
    vi.stubGlobal('fetch', fakeApi(http.get('/api/v1/batches', ({ response }) => response(200).json({ items: [running, done], next_cursor: null }))).fetch);
    renderScreen(<BatchesPage />, { role: 'VIEWER', path: '/batches', route: '/batches' });
    const table = await screen.findByRole('table', { name: 'Batches' });
    const [first, second] = within(table).getAllByRole('row').slice(1);
    expect(within(first!).getByRole('link', { name: '#7' })).toHaveAttribute('href', '/batches/7');
    expect(within(first!).getByText('running')).toBeInTheDocument();
    expect(within(first!).getByTestId('batch-progress')).toHaveTextContent('4 / 10');
    expect(within(first!).getByRole('link', { name: 'job #99' })).toHaveAttribute('href', '/jobs/99');
    expect(within(second!).getByText('succeeded')).toBeInTheDocument();
    expect(within(second!).getByTestId('batch-progress')).toHaveTextContent('2 / 2');
  });

  it('says so when there is no batch yet', async () => {
    vi.stubGlobal('fetch', fakeApi(http.get('/api/v1/batches', ({ response }) => response(200).json({ items: [], next_cursor: null }))).fetch);
    renderScreen(<BatchesPage />, { role: 'VIEWER', path: '/batches', route: '/batches' });
    expect(await screen.findByText('No batches yet.')).toBeInTheDocument();
  });
});
