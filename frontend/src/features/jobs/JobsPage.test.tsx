import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useLocation } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aHandler, aJob } from '../../test/factories';
import { fakeApi, fill, json, renderScreen } from '../../test/render';
import { JobsPage } from './JobsPage';

const job = aJob({
  id: 12, handler: 'sleep', status: 'DEAD', attempt_count: 3, max_attempts: 3, schedule_id: 3, trigger: 'schedule',
  error: 'boom', finished_at: '2026-11-29T08:01:00Z',
});

function WithLocation() {
  const location = useLocation();
  return (
    <>
      <JobsPage />
      <output aria-label="url">{location.search}</output>
    </>
  );
}

afterEach(() => vi.unstubAllGlobals());

describe('jobs page', () => {
  it('reads its filters from the URL, so a shared link shows the same view', async () => {
    const fake = fakeApi({ 'GET /jobs': () => json({ items: [job], next_cursor: null }), 'GET /handlers': () => json([aHandler({ name: 'sleep' })]) });
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<WithLocation />, { role: 'VIEWER', path: '/jobs', route: '/jobs?status=DEAD&status=CANCELLED&handler=sleep&schedule_id=3&q=boom' });
    expect(await screen.findByRole('link', { name: '#12' })).toHaveAttribute('href', '/jobs/12');
    const query = new URL(fake.calls.find((c) => new URL(c.url).pathname === '/api/v1/jobs')?.url ?? '').searchParams;
    expect(query.getAll('status')).toEqual(['DEAD', 'CANCELLED']);
    expect(Object.fromEntries([...query].filter(([k]) => k !== 'status'))).toEqual({ handler: 'sleep', schedule_id: '3', q: 'boom' });
    expect(screen.getByRole('searchbox', { name: 'Search' })).toHaveValue('boom');
    expect(screen.getAllByTitle('2026-11-29 08:00:00 UTC').length).toBeGreaterThan(0);
  });

  it('writes filter changes back to the URL', async () => {
    vi.stubGlobal('fetch', fakeApi({ 'GET /jobs': () => json({ items: [], next_cursor: null }), 'GET /handlers': () => json([]) }).fetch);
    renderScreen(<WithLocation />, { role: 'VIEWER', path: '/jobs', route: '/jobs' });
    expect(await screen.findByText('No jobs yet.')).toBeInTheDocument();
    await fill(screen.getByRole('searchbox', { name: 'Search' }), 'nightly');
    await waitFor(() => expect(screen.getByLabelText('url')).toHaveTextContent('?q=nightly'));
    await userEvent.click(screen.getByRole('combobox', { name: 'Status' }));
    await userEvent.click(await screen.findByRole('option', { name: 'RUNNING' }));
    await waitFor(() => expect(screen.getByLabelText('url')).toHaveTextContent('status=RUNNING'));
    expect(await screen.findByText('No jobs match these filters.')).toBeInTheDocument();
  });
});
