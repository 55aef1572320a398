import createClient from 'openapi-fetch';
import type { paths } from './schema';
import { toApiError } from './problem';
import { withProjectScope } from './project-scope';

export const API_BASE = '/api/v1';

/** Paths that must never trigger a silent refresh: they are how a session starts or ends. */
const NO_REFRESH = [/\/auth\/login$/, /\/auth\/refresh$/, /\/auth\/logout$/, /\/auth\/personas\/[^/]+\/login$/];

export function readCookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

type SessionEndedListener = () => void;
const sessionEndedListeners = new Set<SessionEndedListener>();

/** Called when a silent refresh fails: the login was signed out elsewhere, revoked, or expired. */
export function onSessionEnded(listener: SessionEndedListener): () => void {
  sessionEndedListeners.add(listener);
  return () => sessionEndedListeners.delete(listener);
}

/** Persona sign-in has no session yet: its double-submit value is the cookie GET /auth/personas set. */
const PERSONA_LOGIN = /\/auth\/personas\/[^/]+\/login$/;

function csrfCookieFor(request: Request, sessionCookie: string): string {
  return PERSONA_LOGIN.test(new URL(request.url).pathname) ? 'csrf_persona' : sessionCookie;
}

/** The console never wants tokens in a response body (it has the HttpOnly cookies): saying so keeps
 * them out of reach of any script on the page. */
function asConsole(request: Request): Request {
  const headers = new Headers(request.headers);
  headers.set('X-Cronplane-Client', 'spa');
  return new Request(request, { headers });
}

function withCsrf(request: Request, cookie: string): Request {
  const marked = asConsole(request);
  if (request.method === 'GET' || request.method === 'HEAD') return marked;
  const token = readCookie(csrfCookieFor(request, cookie));
  if (!token) return marked;
  const headers = new Headers(marked.headers);
  headers.set('X-CSRF-TOKEN', token);
  return new Request(marked, { headers });
}

/** Reads an answer nobody will read to its end: until its body is read (or the page goes), the
 * browser keeps the request open — DevTools and Playwright show it pending, which looked like a
 * refresh the server never answered. */
async function finish(response: Response): Promise<void> {
  await response.arrayBuffer().catch(() => undefined);
}

let refreshing: Promise<boolean> | null = null;

/** One refresh at a time: concurrent 401s (the dashboard polls several queries) share it, so the
 * refresh token is spent once — presenting a spent one revokes the whole login. */
export function refreshSession(baseFetch: typeof fetch = globalThis.fetch): Promise<boolean> {
  refreshing ??= (async () => {
    try {
      const req = withCsrf(
        new Request(`${location.origin}${API_BASE}/auth/refresh`, { method: 'POST', credentials: 'same-origin' }),
        'csrf_refresh_token',
      );
      const res = await baseFetch(req);
      await finish(res);
      return res.ok;
    } catch {
      return false;
    } finally {
      queueMicrotask(() => {
        refreshing = null;
      });
    }
  })();
  return refreshing;
}

/**
 * fetch with the cookie session rules: the CSRF double-submit header on every non-GET, and on a 401 one
 * silent refresh then one retry (with the new CSRF value, which the refresh rotates).
 */
export function createSessionFetch(baseFetch: typeof fetch = (...a) => globalThis.fetch(...a)) {
  return async function sessionFetch(input: Request): Promise<Response> {
    const retryCopy = input.clone();
    const first = await baseFetch(withCsrf(input, 'csrf_access_token'));
    if (first.status !== 401 || NO_REFRESH.some((re) => re.test(new URL(input.url).pathname))) {
      return first;
    }
    const refreshed = await refreshSession(baseFetch);
    if (!refreshed) {
      sessionEndedListeners.forEach((l) => l());
      return first;
    }
    await finish(first);
    return baseFetch(withCsrf(retryCopy, 'csrf_access_token'));
  };
}

export function createApiClient(baseFetch?: typeof fetch) {
  return createClient<paths>({
    // The spec's paths carry /api/v1 themselves. Absolute so the same client runs in the browser and
    // under Node's fetch in tests.
    baseUrl: globalThis.location?.origin ?? 'http://localhost',
    credentials: 'same-origin',
    fetch: createSessionFetch(withProjectScope(baseFetch)),
  });
}

export const api = createApiClient();
export type ApiClient = ReturnType<typeof createApiClient>;

/** Unwraps an openapi-fetch result: returns data or throws the problem as an ApiError. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw toApiError(error, response);
  return data as T;
}

/** Lists are `{items, next_cursor}`; a few endpoints may answer a bare array. Accept both. */
export function itemsOf<T>(data: { items: T[] } | T[] | undefined | null): T[] {
  if (!data) return [];
  return Array.isArray(data) ? data : data.items;
}
