import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { FinishedJobStatus } from '../../../api/rules';

const FINISHED = new Set<string>(FinishedJobStatus);

export const jobQueryOptions = (id: number) =>
  queryOptions({
    queryKey: ['jobs', 'detail', id],
    queryFn: () => unwrap(api.GET('/api/v1/jobs/{job_id}', { params: { path: { job_id: id } } })),
    // A job still in flight is watched; a finished one does not change.
    refetchInterval: (q) => (q.state.data && FINISHED.has(q.state.data.status) ? false : 2000),
  });

export const useJob = (id: number) => useQuery(jobQueryOptions(id));
