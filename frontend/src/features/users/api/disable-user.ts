import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { usersQueryKey } from './list-users';

export const useDisableUser = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'User disabled' },
    mutationFn: (id: number) => unwrap(api.POST('/api/v1/users/{user_id}/disable', { params: { path: { user_id: id } } })),
    onSettled: () => qc.invalidateQueries({ queryKey: usersQueryKey }),
  });
};
