import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionProvider, SESSION_ENDED_MESSAGE } from '../lib/session';
import type { Identity } from '../api/types';
import { aLoginResponse, aMe, aPersona, aProblem, anIdentity, someStats } from '../test/factories';
import { fill, fakeApi, http } from '../test/render';
import { routes } from './routes';

const admin = anIdentity({ id: 1, username: 'ada', role: 'ADMIN' });
const unauthorized = (detail: string) => aProblem(401, detail);
/** `/auth/me` answers as `who()` says: signed in as that identity, or 401 while it is null. */
const me = (who: () => Identity | null, detail = 'no token') =>
  http.get('/api/v1/auth/me', ({ response }) => {
    const user = who();
    return user ? response(200).json(aMe(user)) : response(401).json(unauthorized(detail));
  });
const refreshRefused = (detail = 'no token') =>
  http.post('/api/v1/auth/refresh', ({ response }) => response(401).json(unauthorized(detail)));
const personas = (...list: ReturnType<typeof aPersona>[]) =>
  http.get('/api/v1/auth/personas', ({ response }) => response(200).json(list));
const getStats = http.get('/api/v1/stats', ({ response }) => response(200).json(someStats()));
const noJobs = http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null }));
const noHandlers = http.get('/api/v1/handlers', ({ response }) => response(200).json([]));

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
    vi.stubGlobal('fetch', fakeApi(me(() => null), refreshRefused(), personas()).fetch);
    renderApp('/jobs');
    expect(await screen.findByRole('heading', { name: 'Sign in to cronplane' })).toBeInTheDocument();
    expect(screen.queryByText(SESSION_ENDED_MESSAGE)).toBeNull();
    expect(screen.queryByRole('button', { name: /Continue as/ })).toBeNull();
  });

  it('signing in goes back to the page asked for', async () => {
    let signedIn = false;
    const fake = fakeApi(
      me(() => (signedIn ? admin : null)),
      refreshRefused(),
      personas(aPersona({ name: 'operator', role: 'OPERATOR', label: 'Operator' }), aPersona({ name: 'viewer', role: 'VIEWER', label: 'Viewer' })),
      http.post('/api/v1/auth/login', async ({ request, response }) => {
        expect(await request.json()).toEqual({ username: 'ada', password: 'pw' });
        signedIn = true;
        return response(200).json(aLoginResponse({ user: admin }));
      }),
      noJobs,
      noHandlers,
    );
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
    let who: Identity | null = null;
    vi.stubGlobal('fetch', fakeApi(
      me(() => who),
      refreshRefused('no'),
      personas(aPersona({ name: 'viewer', role: 'VIEWER', label: 'Viewer' })),
      http.post('/api/v1/auth/personas/{name}/login', ({ params, response }) => {
        expect(params.name).toBe('viewer');
        who = anIdentity({ id: 3, username: 'viewer', role: 'VIEWER', is_persona: true });
        return response(200).json(aLoginResponse({ user: who }));
      }),
      getStats,
      noJobs,
    ).fetch);
    renderApp('/');
    await userEvent.click(await screen.findByRole('button', { name: 'Continue as Viewer' }));
    expect(await screen.findByRole('heading', { name: 'Dashboard' })).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Audit' })).toBeNull();
  });

  it('a revoked session (refresh refused) returns to login with a clear message', async () => {
    let revoked = false;
    vi.stubGlobal('fetch', fakeApi(
      me(() => (revoked ? null : admin), 'revoked'),
      refreshRefused('refresh token revoked'),
      personas(),
      http.get('/api/v1/jobs', ({ response }) =>
        revoked ? response(401).json(unauthorized('revoked')) : response(200).json({ items: [], next_cursor: null })),
      noHandlers,
    ).fetch);
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
    vi.stubGlobal('fetch', fakeApi(me(() => null, 'revoked'), refreshRefused('revoked'), personas()).fetch);
    renderApp('/schedules');
    expect(await screen.findByText(SESSION_ENDED_MESSAGE)).toBeInTheDocument();
    expect(sessionStorage.getItem('cronplane.hadSession')).toBeNull();
  });

  it('signing out clears the flag and shows no message', async () => {
    let signedIn = true;
    vi.stubGlobal('fetch', fakeApi(
      me(() => (signedIn ? admin : null)),
      refreshRefused('no'),
      http.post('/api/v1/auth/logout', ({ response }) => {
        signedIn = false;
        return response(204).empty();
      }),
      personas(),
      getStats,
      noJobs,
    ).fetch);
    renderApp('/');
    expect(await screen.findByRole('heading', { name: 'Dashboard' })).toBeInTheDocument();
    expect(sessionStorage.getItem('cronplane.hadSession')).toBe('1');
    await userEvent.click(screen.getByRole('button', { name: /^Account/ }));
    await userEvent.click(await screen.findByRole('menuitem', { name: 'Sign out' }));
    expect(await screen.findByRole('heading', { name: 'Sign in to cronplane' })).toBeInTheDocument();
    expect(screen.queryByText(SESSION_ENDED_MESSAGE)).toBeNull();
  });
});
