import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { meQueryKey } from '../../../api/queries/get-me';

export const useLogin = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: { username: string; password: string }) => unwrap(api.POST('/api/v1/auth/login', { body })),
    onSuccess: (data) => qc.setQueryData(meQueryKey, data.user),
  });
};
