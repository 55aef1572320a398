import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { usersQueryKey } from './list-users';

/** POST /users/{id}/password (instance ADMIN): their sessions and API tokens end at once. */
export const useResetUserPassword = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Password reset' },
    mutationFn: ({ id, password }: { id: number; password: string }) =>
      unwrap(api.POST('/api/v1/users/{user_id}/password', { params: { path: { user_id: id } }, body: { password } })),
    onSettled: () => qc.invalidateQueries({ queryKey: usersQueryKey }),
  });
};
