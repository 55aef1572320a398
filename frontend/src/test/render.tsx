import { MantineProvider } from '@mantine/core';
import { getResponse, HttpResponse, type HttpHandler } from 'msw';
import { createOpenApiHttp } from 'openapi-msw';
import { MutationCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { MemoryRouter, Route, Routes } from 'react-router';
import type { paths } from '../api/schema';
import type { Identity, Role } from '../api/types';
import { StaticSessionProvider } from '../lib/session';
import { announceSuccess } from '../lib/toasts';
import { aProblem } from './factories';

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

/**
 * Fake-API handlers typed against the OpenAPI document (openapi-msw over msw): the path must be
 * one the API has for that method, `params`, `query` and `request.json()` are typed, and
 * `response(status).json(body)` only takes a status the operation documents and a body of its
 * schema — so a fake the server could not send fails `tsc`. `response.untyped(...)` is for the
 * rare answer the document does not list (a 5xx, a proxy's 502).
 */
export const http = createOpenApiHttp<paths>({ baseUrl: '*' });

/** A fake API: the first of `handlers` that matches a request answers it (msw's matching); a
 * request none matches gets a 404 problem naming it. Every request is recorded in `calls`. */
export function fakeApi(...handlers: HttpHandler[]) {
  const calls: Request[] = [];
  // msw parses a request (cookies and all) once per handler it tries, which costs a loaded machine
  // tenths of a second each: pick the handlers whose method and path fit first, so it parses once.
  const routes = handlers.map((handler) => ({ handler, method: String(handler.info.method), path: pathPattern(handler.info.path) }));
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    calls.push(req.clone());
    const { origin, pathname } = new URL(req.url);
    const candidates = routes.filter((r) => r.method === req.method && r.path.test(origin + pathname)).map((r) => r.handler);
    const res = candidates.length ? await getResponse(candidates, req) : undefined;
    if (res) return res;
    const detail = `no fake for ${req.method} ${new URL(req.url).pathname}`;
    return HttpResponse.json(aProblem(404, detail), { status: 404, headers: { 'Content-Type': 'application/problem+json' } });
  };
  return { fetch: fetchImpl as typeof fetch, calls };
}

/** msw's path (a leading `*`, then `/api/v1/jobs/:job_id`) as a RegExp over origin + pathname. */
function pathPattern(path: unknown): RegExp {
  const source = String(path)
    .split(/(\*|:[A-Za-z_]\w*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

/** Puts text into a field in one input event (typing key by key is slow on a loaded two-core machine). */
export async function fill(element: HTMLElement, text: string) {
  const { default: userEvent } = await import('@testing-library/user-event');
  await userEvent.click(element);
  await userEvent.paste(text);
}
