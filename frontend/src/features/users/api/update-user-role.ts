import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { Role } from '../../../api/types';
import { usersQueryKey } from './list-users';

export const useUpdateUserRole = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Role changed' },
    mutationFn: ({ id, role }: { id: number; role: Role }) =>
      unwrap(api.PATCH('/api/v1/users/{user_id}', { params: { path: { user_id: id } }, body: { role } })),
    onSettled: () => qc.invalidateQueries({ queryKey: usersQueryKey }),
  });
};
