import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aProblem } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { ProjectsPage } from './ProjectsPage';

afterEach(() => vi.unstubAllGlobals());

describe('projects page', () => {
  it('offers Retry when the list fails to load, and shows the list once it loads', async () => {
    let up = false;
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/projects', ({ response }) => up
        ? response(200).json({ items: [{ slug: 'payments', name: 'Payments', archived: false, role: 'ADMIN', quotas: {}, usage: { schedules: 1, pending_jobs: 0, enqueued_last_minute: 0 } }], next_cursor: null })
        : response.untyped(HttpResponse.json(aProblem(503, 'database unavailable'), { status: 503 }))),
    ).fetch);
    renderScreen(<ProjectsPage />, { role: 'VIEWER', path: '/projects', route: '/projects' });
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('database unavailable');
    up = true;
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('link', { name: 'Payments' })).toBeInTheDocument();
  });
});
