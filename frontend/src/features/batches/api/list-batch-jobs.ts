import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** One page of a batch's jobs, oldest first (the callback is the batch's `callback_job_id`). */
export const batchJobsQueryOptions = (id: number, cursor: string | null, refetchInterval: number | false = false) =>
  queryOptions({
    queryKey: ['batches', 'jobs', id, cursor],
    queryFn: () =>
      unwrap(api.GET('/api/v1/batches/{batch_id}/jobs', { params: { path: { batch_id: id }, query: { cursor: cursor ?? undefined } } })),
    placeholderData: keepPreviousData,
    refetchInterval,
  });

export const useBatchJobs = (id: number, cursor: string | null, refetchInterval: number | false = false) =>
  useQuery(batchJobsQueryOptions(id, cursor, refetchInterval));
