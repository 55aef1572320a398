import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { ApiTokenCreate } from '../../../api/types';
import { tokensQueryKey } from './list-tokens';

export const useCreateToken = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Token created' },
    mutationFn: (body: ApiTokenCreate) => unwrap(api.POST('/api/v1/tokens', { body })),
    onSuccess: () => qc.invalidateQueries({ queryKey: tokensQueryKey }),
  });
};
