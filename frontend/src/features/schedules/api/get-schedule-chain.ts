import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { components } from '../../../api/schema';

export type ScheduleChain = components['schemas']['ScheduleChain'];
export type ChainLink = components['schemas']['ChainLink'];

export const scheduleChainQueryOptions = (id: number) =>
  queryOptions({
    queryKey: ['schedules', 'chain', id],
    queryFn: () => unwrap(api.GET('/api/v1/schedules/{schedule_id}/chain', { params: { path: { schedule_id: id } } })),
  });

// Polled like the fire timeline: a waiting fire turns into a run (or a skip) while you look.
export const useScheduleChain = (id: number, enabled = true, refetchInterval: number | false = 5000) =>
  useQuery({ ...scheduleChainQueryOptions(id), enabled, refetchInterval });
