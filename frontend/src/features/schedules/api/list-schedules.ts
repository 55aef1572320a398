import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { operations } from '../../../api/schema';

export interface ScheduleFilters {
  q?: string;
  paused?: boolean;
  include_deleted?: boolean;
  created_after?: string;
  created_before?: string;
  /** The API's order (`name`, `-last_run_at`); absent: newest first. */
  sort?: ScheduleSort;
  limit?: number;
  cursor?: string;
}

export type ScheduleSort = NonNullable<NonNullable<operations['listSchedules']['parameters']['query']>['sort']>;
export const SCHEDULE_SORTS: ScheduleSort[] = ['-id', 'id', 'name', '-name', 'next_run_at', '-next_run_at', 'last_run_at', '-last_run_at'];

export const listSchedulesQueryOptions = (filters: ScheduleFilters, refetchInterval: number | false = 10_000) =>
  queryOptions({
    queryKey: ['schedules', 'list', filters],
    queryFn: () => unwrap(api.GET('/api/v1/schedules', { params: { query: filters } })),
    placeholderData: keepPreviousData,
    refetchInterval,
  });

export const useSchedules = (filters: ScheduleFilters, refetchInterval: number | false = 10_000) =>
  useQuery(listSchedulesQueryOptions(filters, refetchInterval));
