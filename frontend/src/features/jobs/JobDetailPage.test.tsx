import { screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aJobDetail } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { JobDetailPage } from './JobDetailPage';

afterEach(() => vi.unstubAllGlobals());

const show = (job: ReturnType<typeof aJobDetail>) => {
  vi.stubGlobal('fetch', fakeApi(http.get('/api/v1/jobs/{job_id}', ({ response }) => response(200).json(job))).fetch);
  renderScreen(<JobDetailPage />, { role: 'VIEWER', path: '/jobs/:id', route: `/jobs/${job.id}` });
};

describe('job detail page', () => {
  it('shows a dead job its failure, not an empty "Result null" card', async () => {
    show(aJobDetail({ id: 7, status: 'DEAD', result: null, error: 'HandlerFailed: upstream returned 503' }));
    expect(await screen.findByRole('heading', { name: 'Error' })).toBeInTheDocument();
    expect(screen.getByText(/upstream returned 503/)).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Result' })).toBeNull();
  });

  it('shows a succeeded job its result', async () => {
    show(aJobDetail({ id: 8, status: 'SUCCEEDED', result: { rows: 3 }, error: null }));
    expect(await screen.findByRole('heading', { name: 'Result' })).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Error' })).toBeNull();
  });

  it('links its trace to the viewer CRONPLANE_TRACE_URL names', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    show(aJobDetail({ id: 9, status: 'SUCCEEDED', trace_id: traceId, trace_url: `https://tempo.example/trace/${traceId}` }));
    const link = await screen.findByRole('link', { name: traceId });
    expect(link).toHaveAttribute('href', `https://tempo.example/trace/${traceId}`);
  });
});
