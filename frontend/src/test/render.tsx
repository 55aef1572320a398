import { MantineProvider } from '@mantine/core';
import { MutationCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { MemoryRouter, Route, Routes } from 'react-router';
import type { paths } from '../api/schema';
import type { Identity, Role } from '../api/types';
import { StaticSessionProvider } from '../lib/session';
import { announceSuccess } from '../lib/toasts';

export const userWith = (role: Role): Identity => ({ id: 1, username: role.toLowerCase(), role }) as Identity;

/** Renders a screen as the app would, for a fixed signed-in user, at a route. */
export function renderScreen(
  ui: ReactElement,
  { role = 'ADMIN', path = '/', route = '/' }: { role?: Role | null; path?: string; route?: string } = {},
) {
  const client = new QueryClient({
    // As the app's client does (providers.tsx): a mutation's meta.success becomes a toast.
    mutationCache: new MutationCache({ onSuccess: (data, variables, _context, mutation) => announceSuccess(mutation.meta, data, variables) }),
    defaultOptions: { queries: { retry: false }, mutations: { retry: false } },
  });
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

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
/** `/jobs/{job_id}` → `/jobs/${string}`: a route key names a concrete path. */
type Concrete<P extends string> = P extends `${infer Head}{${string}}${infer Tail}` ? `${Head}${string}${Concrete<Tail>}` : P;
/** Every `"METHOD /path"` the OpenAPI document has (path after /api/v1): a fake for a route the
 * API does not have, or no longer has, fails `tsc`. */
export type RouteKey = {
  [P in keyof paths & string]: {
    [M in Method]: [NonNullable<paths[P][M]>] extends [never]
      ? never
      : `${Uppercase<M>} ${Concrete<P extends `/api/v1${infer Rest}` ? Rest : P>}`;
  }[Method];
}[keyof paths & string];

/** A fake API: routes are `"METHOD /path"` (path after /api/v1, no query) → handler; calls are recorded. */
export function fakeApi(routes: Partial<Record<RouteKey, Handler>>) {
  const calls: Request[] = [];
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    calls.push(req.clone());
    const url = new URL(req.url);
    const key = `${req.method} ${url.pathname.replace(/^\/api\/v1/, '')}`;
    const handler = (routes as Record<string, Handler | undefined>)[key];
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
