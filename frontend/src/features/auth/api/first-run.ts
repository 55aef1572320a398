import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const firstRunQueryOptions = () =>
  queryOptions({
    queryKey: ['auth', 'first-run'],
    queryFn: () => unwrap(api.GET('/api/v1/auth/first-run')),
    staleTime: 60_000,
  });

export const useFirstRun = () => useQuery(firstRunQueryOptions());
