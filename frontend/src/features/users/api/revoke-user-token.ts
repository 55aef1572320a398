import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { userTokensQueryKey } from './list-user-tokens';

/** An instance ADMIN revokes one of another user's tokens (audited as `token.revoke`). */
export const useRevokeUserToken = (userId: number) => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Token revoked' },
    mutationFn: (id: number) => unwrap(api.DELETE('/api/v1/tokens/{token_id}', { params: { path: { token_id: id } } })),
    onSettled: () => qc.invalidateQueries({ queryKey: userTokensQueryKey(userId) }),
  });
};
