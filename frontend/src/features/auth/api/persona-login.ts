import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { meQueryKey } from '../../../api/queries/get-me';

export const usePersonaLogin = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => unwrap(api.POST('/api/v1/auth/personas/{name}/login', { params: { path: { name } } })),
    onSuccess: (data) => qc.setQueryData(meQueryKey, data.user),
  });
};
