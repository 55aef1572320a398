import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export interface ScheduleFilters {
  q?: string;
  paused?: boolean;
  include_deleted?: boolean;
  created_after?: string;
  created_before?: string;
  limit?: number;
  cursor?: string;
}

export const listSchedulesQueryOptions = (filters: ScheduleFilters, refetchInterval: number | false = 10_000) =>
  queryOptions({
    queryKey: ['schedules', 'list', filters],
    queryFn: () => unwrap(api.GET('/api/v1/schedules', { params: { query: filters } })),
    placeholderData: keepPreviousData,
    refetchInterval,
  });

export const useSchedules = (filters: ScheduleFilters, refetchInterval: number | false = 10_000) =>
  useQuery(listSchedulesQueryOptions(filters, refetchInterval));
