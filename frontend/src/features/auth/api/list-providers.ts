import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const listProvidersQueryOptions = () =>
  queryOptions({
    queryKey: ['auth', 'providers'],
    queryFn: () => unwrap(api.GET('/api/v1/auth/providers')),
    staleTime: 5 * 60_000,
  });

export const useProviders = () => useQuery(listProvidersQueryOptions());
