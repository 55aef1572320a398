import { describe, expect, it } from 'vitest';
import { aProblem } from '../../test/factories';
import { fakeApi, http } from '../../test/render';
import { createApiClient } from '../client';
import { logout } from './logout';

describe('logout', () => {
  it('retries with the refresh CSRF value when the access token has expired, so the refresh token dies too', async () => {
    document.cookie = 'csrf_access_token=access-csrf; path=/';
    document.cookie = 'csrf_refresh_token=refresh-csrf; path=/';
    let call = 0;
    const fake = fakeApi(
      http.post('/api/v1/auth/logout', ({ request, response }) => {
        call += 1;
        if (call === 1) {
          expect(request.headers.get('X-CSRF-TOKEN')).toBe('access-csrf');
          return response(401).json(aProblem(401, 'token expired'));
        }
        expect(request.headers.get('X-CSRF-TOKEN'), 'second try carries the refresh CSRF value').toBe('refresh-csrf');
        return response(204).empty();
      }),
    );
    await logout(createApiClient(fake.fetch), fake.fetch);
    expect(call).toBe(2);
  });

  it('signs out with one request while the access token is valid', async () => {
    let calls = 0;
    const fake = fakeApi(
      http.post('/api/v1/auth/logout', ({ response }) => {
        calls += 1;
        return response(204).empty();
      }),
    );
    await logout(createApiClient(fake.fetch), fake.fetch);
    expect(calls).toBe(1);
  });
});
