import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../client';

export const listHandlersQueryOptions = () =>
  queryOptions({
    queryKey: ['handlers'],
    queryFn: () => unwrap(api.GET('/api/v1/handlers')),
    staleTime: 5 * 60_000,
  });

export const useHandlers = () => useQuery(listHandlersQueryOptions());
