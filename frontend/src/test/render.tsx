import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { MemoryRouter, Route, Routes } from 'react-router';
import type { Identity, Role } from '../api/types';
import { StaticSessionProvider } from '../lib/session';

export const userWith = (role: Role): Identity => ({ id: 1, username: role.toLowerCase(), role }) as Identity;

/** Renders a screen as the app would, for a fixed signed-in user, at a route. */
export function renderScreen(
  ui: ReactElement,
  { role = 'ADMIN', path = '/', route = '/' }: { role?: Role | null; path?: string; route?: string } = {},
) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  return {
    client,
    ...render(
      <MantineProvider env="test">
        <QueryClientProvider client={client}>
          <StaticSessionProvider user={role ? userWith(role) : null}>
            <MemoryRouter initialEntries={[route]}>
              <Routes>
                <Route path={path} element={ui} />
                <Route path="*" element={<div>elsewhere</div>} />
              </Routes>
            </MemoryRouter>
          </StaticSessionProvider>
        </QueryClientProvider>
      </MantineProvider>,
    ),
  };
}

export type Handler = (req: Request) => Response | Promise<Response> | undefined;

export const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

export const problem = (status: number, detail: string, errors?: Record<string, unknown>) =>
  new Response(JSON.stringify({ type: 'about:blank', title: 'Error', status, detail, errors }), {
    status,
    headers: { 'Content-Type': 'application/problem+json' },
  });

/** A fake API: routes are `"METHOD /path"` (path after /api/v1, no query) → handler; calls are recorded. */
export function fakeApi(routes: Record<string, Handler>) {
  const calls: Request[] = [];
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    calls.push(req.clone());
    const url = new URL(req.url);
    const key = `${req.method} ${url.pathname.replace(/^\/api\/v1/, '')}`;
    const handler = routes[key];
    const res = handler ? await handler(req) : undefined;
    return res ?? problem(404, `no fake for ${key}`);
  };
  return { fetch: fetchImpl as typeof fetch, calls };
}

/** Puts text into a field in one input event (typing key by key is slow on a loaded two-core machine). */
export async function fill(element: HTMLElement, text: string) {
  const { default: userEvent } = await import('@testing-library/user-event');
  await userEvent.click(element);
  await userEvent.paste(text);
}
