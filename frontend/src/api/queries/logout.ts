import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../client';
import { sessionFlag } from '../../lib/session-flag';
import { meQueryKey } from './get-me';

export const useLogout = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async () => {
      await api.POST('/api/v1/auth/logout');
    },
    onSettled: () => {
      // Signing out on purpose is not a session that "ended".
      sessionFlag.clear();
      qc.setQueryData(meQueryKey, null);
      qc.removeQueries({ predicate: (q) => q.queryKey[0] !== 'auth' });
    },
  });
};
