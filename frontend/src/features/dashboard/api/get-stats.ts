import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const statsQueryOptions = (refetchInterval: number | false) =>
  queryOptions({
    queryKey: ['stats'],
    queryFn: () => unwrap(api.GET('/api/v1/stats')),
    refetchInterval,
    // The answer main.tsx took from index.html's early request is fresh when the dashboard mounts:
    // not asked again at once (the polls follow refetchInterval whatever this says).
    staleTime: 2_000,
    // A failed poll must surface as "reconnecting", not be retried silently while old numbers look current.
    retry: false,
  });

export const useStats = (refetchInterval: number | false) => useQuery(statsQueryOptions(refetchInterval));
