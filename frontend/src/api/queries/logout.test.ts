import { describe, expect, it } from 'vitest';
import { fakeApi, problem } from '../../test/render';
import { createApiClient } from '../client';
import { logout } from './logout';

describe('logout', () => {
  it('retries with the refresh CSRF value when the access token has expired, so the refresh token dies too', async () => {
    document.cookie = 'csrf_access_token=access-csrf; path=/';
    document.cookie = 'csrf_refresh_token=refresh-csrf; path=/';
    let call = 0;
    const fake = fakeApi({
      'POST /auth/logout': (req) => {
        call += 1;
        if (call === 1) {
          expect(req.headers.get('X-CSRF-TOKEN')).toBe('access-csrf');
          return problem(401, 'token expired');
        }
        expect(req.headers.get('X-CSRF-TOKEN'), 'second try carries the refresh CSRF value').toBe('refresh-csrf');
        return new Response(null, { status: 204 });
      },
    });
    await logout(createApiClient(fake.fetch), fake.fetch);
    expect(call).toBe(2);
  });

  it('signs out with one request while the access token is valid', async () => {
    let calls = 0;
    const fake = fakeApi({ 'POST /auth/logout': () => { calls += 1; return new Response(null, { status: 204 }); } });
    await logout(createApiClient(fake.fetch), fake.fetch);
    expect(calls).toBe(1);
  });
});
