import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { UserCreate } from '../../../api/types';
import { usersQueryKey } from './list-users';

export const useCreateUser = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'User created' },
    mutationFn: (body: UserCreate) => unwrap(api.POST('/api/v1/users', { body })),
    onSuccess: () => qc.invalidateQueries({ queryKey: usersQueryKey }),
  });
};
