import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../client';
import { ApiError } from '../problem';
import type { JobStatus } from '../types';
import type { operations } from '../schema';

export interface JobFilters {
  status?: JobStatus[];
  handler?: string;
  queue?: string;
  schedule_id?: number;
  q?: string;
  created_after?: string;
  created_before?: string;
  /** Leave out jobs of these triggers: the console passes `notification` (deliveries are not the operator's work). */
  exclude_trigger?: 'notification'[];
  /** The API's order (`-finished_at`); absent: newest first. */
  sort?: JobSort;
  cursor?: string;
  limit?: number;
}

export type JobSort = NonNullable<NonNullable<operations['listJobs']['parameters']['query']>['sort']>;
export const JOB_SORTS: JobSort[] = ['-id', 'id', '-created_at', 'created_at', '-finished_at', 'finished_at'];

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
    // A refused request (a search too broad to answer in time, a filter out of range) is refused
    // again: polling it would only spend the server's search budget every interval.
    refetchInterval: (query) => (query.state.error instanceof ApiError && query.state.error.status < 500 ? false : refetchInterval),
  });

export const useJobs = (filters: JobFilters, refetchInterval: number | false = false) =>
  useQuery(listJobsQueryOptions(filters, refetchInterval));
