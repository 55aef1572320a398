import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { JobFilters } from '../../../api/queries/list-jobs';

/** GET /jobs/count: how many jobs the filters match (counted up to the bulk limit + 1). */
export const useJobCount = (filters: Omit<JobFilters, 'cursor' | 'limit'>, enabled: boolean) =>
  useQuery({
    queryKey: ['jobs', 'count', filters],
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/jobs/count', {
          params: { query: { ...filters, status: filters.status?.length ? filters.status : undefined } },
        }),
      ),
    enabled,
  });
