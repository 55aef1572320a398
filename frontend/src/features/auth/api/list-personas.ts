import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const listPersonasQueryOptions = () =>
  queryOptions({
    queryKey: ['auth', 'personas'],
    queryFn: () => unwrap(api.GET('/api/v1/auth/personas')),
    staleTime: 5 * 60_000,
  });

export const usePersonas = () => useQuery(listPersonasQueryOptions());
