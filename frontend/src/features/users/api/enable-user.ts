import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { usersQueryKey } from './list-users';

export const useEnableUser = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'User enabled' },
    mutationFn: (id: number) => unwrap(api.POST('/api/v1/users/{user_id}/enable', { params: { path: { user_id: id } } })),
    onSettled: () => qc.invalidateQueries({ queryKey: usersQueryKey }),
  });
};
