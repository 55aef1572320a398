import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../client';

/** Queues with their depth (pending) and running count, in the project scope. */
export const queuesQueryKey = ['queues'] as const;

export const listQueuesQueryOptions = (refetchInterval: number | false = false) =>
  queryOptions({
    queryKey: queuesQueryKey,
    queryFn: () => unwrap(api.GET('/api/v1/queues')),
    refetchInterval,
  });

export const useQueues = (refetchInterval: number | false = false) => useQuery(listQueuesQueryOptions(refetchInterval));
