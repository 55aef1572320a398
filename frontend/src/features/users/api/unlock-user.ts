import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { usersQueryKey } from './list-users';

export const useUnlockUser = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'User unlocked' },
    mutationFn: (id: number) => unwrap(api.POST('/api/v1/users/{user_id}/unlock', { params: { path: { user_id: id } } })),
    onSettled: () => qc.invalidateQueries({ queryKey: usersQueryKey }),
  });
};
