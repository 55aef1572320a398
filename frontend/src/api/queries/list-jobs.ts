import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../client';
import type { JobStatus } from '../types';

export interface JobFilters {
  status?: JobStatus[];
  handler?: string;
  queue?: string;
  schedule_id?: number;
  q?: string;
  created_after?: string;
  created_before?: string;
  cursor?: string;
  limit?: number;
}

export const listJobsQueryOptions = (filters: JobFilters, refetchInterval: number | false = false) =>
  queryOptions({
    queryKey: ['jobs', 'list', filters],
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/jobs', {
          params: { query: { ...filters, status: filters.status?.length ? filters.status : undefined } },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval,
  });

export const useJobs = (filters: JobFilters, refetchInterval: number | false = false) =>
  useQuery(listJobsQueryOptions(filters, refetchInterval));
