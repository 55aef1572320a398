import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { ScheduleFilters } from './list-schedules';

/** GET /schedules/count: how many schedules the list's filters match (counted up to limit + 1). */
export const useScheduleCount = (filters: Omit<ScheduleFilters, 'cursor' | 'limit'>, refetchInterval: number | false = 10_000) =>
  useQuery({
    queryKey: ['schedules', 'count', filters],
    queryFn: () => unwrap(api.GET('/api/v1/schedules/count', { params: { query: filters } })),
    refetchInterval,
  });
