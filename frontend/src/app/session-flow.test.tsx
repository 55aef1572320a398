import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionProvider, SESSION_ENDED_MESSAGE } from '../lib/session';
import { fill, fakeApi, json, problem } from '../test/render';
import { routes } from './routes';

const admin = { id: 1, username: 'ada', role: 'ADMIN' };
const stats = { jobs_by_status: {}, throughput: [], leader: null, workers: [] };

function renderApp(path: string) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  render(
    <MantineProvider env="test">
      <QueryClientProvider client={client}>
        <SessionProvider>
          <RouterProvider router={router} />
        </SessionProvider>
      </QueryClientProvider>
    </MantineProvider>,
  );
  return { client, router };
}

afterEach(() => {
  vi.unstubAllGlobals();
  sessionStorage.clear();
});

describe('session flow', () => {
  it('a first visit without a session lands on the login page, without a "session ended" message', async () => {
    vi.stubGlobal('fetch', fakeApi({ 'GET /auth/me': () => problem(401, 'no token'), 'POST /auth/refresh': () => problem(401, 'no token'), 'GET /auth/personas': () => json([]) }).fetch);
    renderApp('/jobs');
    expect(await screen.findByRole('heading', { name: 'Sign in to cronplane' })).toBeInTheDocument();
    expect(screen.queryByText(SESSION_ENDED_MESSAGE)).toBeNull();
    expect(screen.queryByRole('button', { name: /Continue as/ })).toBeNull();
  });

  it('signing in goes back to the page asked for', async () => {
    let signedIn = false;
    const fake = fakeApi({
      'GET /auth/me': () => (signedIn ? json(admin) : problem(401, 'no token')),
      'POST /auth/refresh': () => problem(401, 'no token'),
      'GET /auth/personas': () => json([{ name: 'operator', role: 'OPERATOR', label: 'Operator' }, { name: 'viewer', role: 'VIEWER', label: 'Viewer' }]),
      'POST /auth/login': async (req) => {
        expect(await req.json()).toEqual({ username: 'ada', password: 'pw' });
        signedIn = true;
        return json({ access_token: 'a', refresh_token: 'r', token_type: 'Bearer', expires_in: 900, user: admin });
      },
      'GET /jobs': () => json({ items: [], next_cursor: null }),
      'GET /handlers': () => json([]),
    });
    vi.stubGlobal('fetch', fake.fetch);
    renderApp('/jobs');
    expect(await screen.findByRole('button', { name: 'Continue as Operator' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Continue as Viewer' })).toBeInTheDocument();
    await fill(screen.getByLabelText(/Username/), 'ada');
    await fill(screen.getByLabelText(/Password/), 'pw');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByRole('heading', { name: 'Jobs' })).toBeInTheDocument();
    expect(await screen.findByText('No jobs yet.')).toBeInTheDocument();
  });

  it('a persona button signs in as that persona', async () => {
    let who: unknown = null;
    vi.stubGlobal('fetch', fakeApi({
      'GET /auth/me': () => (who ? json(who) : problem(401, 'no token')),
      'POST /auth/refresh': () => problem(401, 'no'),
      'GET /auth/personas': () => json([{ name: 'viewer', role: 'VIEWER', label: 'Viewer' }]),
      'POST /auth/personas/viewer/login': () => {
        who = { id: 3, username: 'viewer', role: 'VIEWER' };
        return json({ user: who });
      },
      'GET /stats': () => json(stats),
      'GET /jobs': () => json({ items: [], next_cursor: null }),
    }).fetch);
    renderApp('/');
    await userEvent.click(await screen.findByRole('button', { name: 'Continue as Viewer' }));
    expect(await screen.findByRole('heading', { name: 'Dashboard' })).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Audit' })).toBeNull();
  });

  it('a revoked session (refresh refused) returns to login with a clear message', async () => {
    let revoked = false;
    vi.stubGlobal('fetch', fakeApi({
      'GET /auth/me': () => (revoked ? problem(401, 'revoked') : json(admin)),
      'POST /auth/refresh': () => problem(401, 'refresh token revoked'),
      'GET /auth/personas': () => json([]),
      'GET /jobs': () => (revoked ? problem(401, 'revoked') : json({ items: [], next_cursor: null })),
      'GET /handlers': () => json([]),
    }).fetch);
    const { client } = renderApp('/jobs');
    expect(await screen.findByText('No jobs yet.')).toBeInTheDocument();
    revoked = true;
    await act(() => client.refetchQueries({ queryKey: ['jobs'] }));
    expect(await screen.findByText(SESSION_ENDED_MESSAGE)).toBeInTheDocument();
    await waitFor(() => expect(screen.getByRole('heading', { name: 'Sign in to cronplane' })).toBeInTheDocument());
  });
});

describe('session flow across a reload', () => {
  it('a reload that finds the login revoked says the session ended; a deliberate sign-out does not', async () => {
    sessionStorage.setItem('cronplane.hadSession', '1');
    vi.stubGlobal('fetch', fakeApi({ 'GET /auth/me': () => problem(401, 'revoked'), 'POST /auth/refresh': () => problem(401, 'revoked'), 'GET /auth/personas': () => json([]) }).fetch);
    renderApp('/schedules');
    expect(await screen.findByText(SESSION_ENDED_MESSAGE)).toBeInTheDocument();
    expect(sessionStorage.getItem('cronplane.hadSession')).toBeNull();
  });

  it('signing out clears the flag and shows no message', async () => {
    let signedIn = true;
    vi.stubGlobal('fetch', fakeApi({
      'GET /auth/me': () => (signedIn ? json(admin) : problem(401, 'no token')),
      'POST /auth/refresh': () => problem(401, 'no'),
      'POST /auth/logout': () => {
        signedIn = false;
        return new Response(null, { status: 204 });
      },
      'GET /auth/personas': () => json([]),
      'GET /stats': () => json(stats),
      'GET /jobs': () => json({ items: [], next_cursor: null }),
    }).fetch);
    renderApp('/');
    expect(await screen.findByRole('heading', { name: 'Dashboard' })).toBeInTheDocument();
    expect(sessionStorage.getItem('cronplane.hadSession')).toBe('1');
    await userEvent.click(screen.getByRole('button', { name: /^Account/ }));
    await userEvent.click(await screen.findByRole('menuitem', { name: 'Sign out' }));
    expect(await screen.findByRole('heading', { name: 'Sign in to cronplane' })).toBeInTheDocument();
    expect(screen.queryByText(SESSION_ENDED_MESSAGE)).toBeNull();
  });
});
