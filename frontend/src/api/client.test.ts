import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { aJob, aLoginResponse, aProblem, anIdentity, someStats } from '../test/factories';
import { fakeApi, http } from '../test/render';
import { createApiClient, onSessionEnded } from './client';
import { ApiError } from './problem';

function setCookie(name: string, value: string) {
  document.cookie = `${name}=${value}; path=/`;
}

/** The fake's answers, kept to see which the client read. */
function answersOf(fake: { fetch: typeof fetch }) {
  const answers: Response[] = [];
  const recording: typeof fetch = async (input, init) => {
    const answer = await fake.fetch(input, init);
    answers.push(answer);
    return answer;
  };
  return { fetch: recording, answers };
}

describe('API client session handling', () => {
  beforeEach(() => {
    setCookie('csrf_access_token', 'csrf-1');
    setCookie('csrf_refresh_token', 'refresh-csrf-1');
  });
  afterEach(() => vi.restoreAllMocks());

  it('sends the CSRF double-submit header on non-GET requests only', async () => {
    const fake = fakeApi(
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null })),
      http.post('/api/v1/jobs/{job_id}/cancel', ({ response }) => response(200).json(aJob({ id: 7, status: 'CANCELLED' }))),
    );
    const api = createApiClient(fake.fetch);
    await api.GET('/api/v1/jobs');
    await api.POST('/api/v1/jobs/{job_id}/cancel', { params: { path: { job_id: 7 } } });
    expect(fake.calls[0]?.headers.get('X-CSRF-TOKEN')).toBeNull();
    expect(fake.calls[1]?.headers.get('X-CSRF-TOKEN')).toBe('csrf-1');
  });

  it('persona sign-in echoes the csrf_persona cookie, and every call says it is the console', async () => {
    setCookie('csrf_persona', 'persona-csrf-1');
    const fake = fakeApi(
      http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null })),
      http.post('/api/v1/auth/personas/{name}/login', ({ response }) =>
        response(200).json(aLoginResponse({ user: anIdentity({ id: 2, username: 'operator', role: 'OPERATOR' }) }))),
    );
    const api = createApiClient(fake.fetch);
    await api.GET('/api/v1/jobs');
    await api.POST('/api/v1/auth/personas/{name}/login', { params: { path: { name: 'operator' } } });
    expect(fake.calls[1]?.headers.get('X-CSRF-TOKEN')).toBe('persona-csrf-1');
    expect(fake.calls.map((c) => c.headers.get('X-Cronplane-Client'))).toEqual(['spa', 'spa']);
  });

  it('on a 401 refreshes once, silently, then retries with the rotated CSRF token', async () => {
    let expired = true;
    const fake = fakeApi(
      http.post('/api/v1/jobs/{job_id}/retry', ({ response }) =>
        expired ? response(401).json(aProblem(401, 'token expired')) : response(200).json(aJob({ id: 7, status: 'PENDING' }))),
      http.post('/api/v1/auth/refresh', ({ request, response }) => {
        expect(request.headers.get('X-CSRF-TOKEN'), 'refresh uses the refresh CSRF cookie').toBe('refresh-csrf-1');
        expired = false;
        setCookie('csrf_access_token', 'csrf-2');
        return response(200).json(aLoginResponse());
      }),
    );
    const api = createApiClient(fake.fetch);
    const { data, response } = await api.POST('/api/v1/jobs/{job_id}/retry', { params: { path: { job_id: 7 } } });
    expect(response.status).toBe(200);
    expect(data?.status).toBe('PENDING');
    expect(fake.calls.at(-1)?.headers.get('X-CSRF-TOKEN'), 'the retry carries the rotated CSRF value').toBe('csrf-2');
    expect(fake.calls.map((c) => `${c.method} ${new URL(c.url).pathname}`)).toEqual([
      'POST /api/v1/jobs/7/retry',
      'POST /api/v1/auth/refresh',
      'POST /api/v1/jobs/7/retry',
    ]);
  });

  it('shares one refresh between concurrent 401s (a refresh token is single-use)', async () => {
    let expired = true;
    let refreshes = 0;
    const fake = fakeApi(
      http.get('/api/v1/stats', ({ response }) => (expired ? response(401).json(aProblem(401, 'expired')) : response(200).json(someStats()))),
      http.get('/api/v1/jobs', ({ response }) =>
        expired ? response(401).json(aProblem(401, 'expired')) : response(200).json({ items: [], next_cursor: null })),
      http.post('/api/v1/auth/refresh', async ({ response }) => {
        refreshes++;
        await new Promise((r) => setTimeout(r, 5));
        expired = false;
        return response(200).json(aLoginResponse());
      }),
    );
    const api = createApiClient(fake.fetch);
    const [a, b] = await Promise.all([api.GET('/api/v1/stats'), api.GET('/api/v1/jobs')]);
    expect([a.response.status, b.response.status]).toEqual([200, 200]);
    expect(refreshes).toBe(1);
  });

  it('when the refresh fails, reports the session as ended and returns the original 401', async () => {
    const ended = vi.fn();
    const off = onSessionEnded(ended);
    const fake = fakeApi(
      http.get('/api/v1/schedules', ({ response }) => response(401).json(aProblem(401, 'revoked'))),
      http.post('/api/v1/auth/refresh', ({ response }) => response(401).json(aProblem(401, 'refresh token spent'))),
    );
    const api = createApiClient(fake.fetch);
    const { response, error } = await api.GET('/api/v1/schedules');
    off();
    expect(response.status).toBe(401);
    expect((error as { detail: string }).detail).toBe('revoked');
    expect(ended).toHaveBeenCalledTimes(1);
  });

  it('reads a spent 401 and the refresh answer to their end (an unread body keeps its request open in the browser)', async () => {
    let expired = true;
    const fake = answersOf(
      fakeApi(
        http.get('/api/v1/stats', ({ response }) => (expired ? response(401).json(aProblem(401, 'expired')) : response(200).json(someStats()))),
        http.post('/api/v1/auth/refresh', ({ response }) => {
          expired = false;
          return response(200).json(aLoginResponse());
        }),
      ),
    );
    await createApiClient(fake.fetch).GET('/api/v1/stats');
    expect(fake.answers.map((a) => [a.status, a.bodyUsed])).toEqual([
      [401, true],
      [200, true],
      [200, true],
    ]);
  });

  it('reads a refused refresh to its end too', async () => {
    const fake = answersOf(
      fakeApi(
        http.get('/api/v1/schedules', ({ response }) => response(401).json(aProblem(401, 'revoked'))),
        http.post('/api/v1/auth/refresh', ({ response }) => response(401).json(aProblem(401, 'refresh token spent'))),
      ),
    );
    const off = onSessionEnded(() => {});
    await createApiClient(fake.fetch).GET('/api/v1/schedules');
    off();
    expect(fake.answers.map((a) => [a.status, a.bodyUsed])).toEqual([
      [401, true],
      [401, true],
    ]);
  });

  it('never tries to refresh a failed login', async () => {
    const fake = fakeApi(http.post('/api/v1/auth/login', ({ response }) => response(401).json(aProblem(401, 'Invalid credentials'))));
    const api = createApiClient(fake.fetch);
    await api.POST('/api/v1/auth/login', { body: { username: 'x', password: 'y' } });
    expect(fake.calls).toHaveLength(1);
  });

  it('turns problem+json into ApiError with field errors', async () => {
    const { unwrap } = await import('./client');
    const fake = fakeApi(
      http.post('/api/v1/schedules', ({ response }) =>
        response(422).json(aProblem(422, 'Invalid schedule', { name: ['Missing data for required field.'] }))),
    );
    const api = createApiClient(fake.fetch);
    const err = await unwrap(api.POST('/api/v1/schedules', { body: { name: '', handler: 'noop', cron: '* * * * * *', timezone: 'UTC' } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(422);
    expect((err as ApiError).fieldErrors).toEqual({ name: 'Missing data for required field.' });
  });
});
