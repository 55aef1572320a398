import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, API_BASE, readCookie, type ApiClient } from '../client';
import { sessionFlag } from '../../lib/session-flag';
import { meQueryKey } from './get-me';

/** Signs out. When the access token has already expired (a stale tab), the server accepts the
 * refresh token instead, whose CSRF double-submit value is the refresh one: retry with it so the
 * login's refresh token is revoked too, rather than left alive behind a failed sign-out. */
export async function logout(
  client: ApiClient = api,
  baseFetch: typeof fetch = (...a) => globalThis.fetch(...a),
): Promise<void> {
  const { response } = await client.POST('/api/v1/auth/logout');
  if (response.status !== 401) return;
  const token = readCookie('csrf_refresh_token');
  await baseFetch(
    new Request(`${location.origin}${API_BASE}/auth/logout`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: token ? { 'X-CSRF-TOKEN': token } : {},
    }),
  );
}

export const useLogout = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => logout(),
    onSettled: () => {
      // Signing out on purpose is not a session that "ended".
      sessionFlag.clear();
      qc.setQueryData(meQueryKey, null);
      qc.removeQueries({ predicate: (q) => q.queryKey[0] !== 'auth' });
    },
  });
};
