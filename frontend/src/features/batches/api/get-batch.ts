import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** A batch's counts and state; watched while it runs, still once it has finished. */
export const batchQueryOptions = (id: number) =>
  queryOptions({
    queryKey: ['batches', 'detail', id],
    queryFn: () => unwrap(api.GET('/api/v1/batches/{batch_id}', { params: { path: { batch_id: id } } })),
    refetchInterval: (q) => (q.state.data && q.state.data.state !== 'running' ? false : 2000),
  });

export const useBatch = (id: number) => useQuery(batchQueryOptions(id));
