import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** GET /jobs/status-counts: jobs in each status of the project scope (and queue), from the
 * counters the database keeps, never a count of jobs: the list's status tabs. */
export const useJobStatusCounts = (filters: { queue?: string; exclude_trigger?: 'notification'[] }, refetchInterval: number | false) =>
  useQuery({
    queryKey: ['jobs', 'status-counts', filters],
    queryFn: () => unwrap(api.GET('/api/v1/jobs/status-counts', { params: { query: filters } })),
    refetchInterval,
  });
