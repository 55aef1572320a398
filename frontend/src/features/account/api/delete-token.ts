import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { tokensQueryKey } from './list-tokens';

export const useDeleteToken = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Token deleted' },
    mutationFn: (id: number) => unwrap(api.DELETE('/api/v1/tokens/{token_id}', { params: { path: { token_id: id } } })),
    onSettled: () => qc.invalidateQueries({ queryKey: tokensQueryKey }),
  });
};
