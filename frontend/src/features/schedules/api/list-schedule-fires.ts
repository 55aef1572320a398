import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { components } from '../../../api/schema';

export type FireEntry = components['schemas']['FireEntry'];
export type FireOutcome = FireEntry['outcome'];

export const scheduleFiresQueryOptions = (id: number) =>
  queryOptions({
    queryKey: ['schedules', 'fires', id],
    queryFn: () => unwrap(api.GET('/api/v1/schedules/{schedule_id}/fires', { params: { path: { schedule_id: id } } })),
  });

// Refetched every few seconds: a pending fire turns into enqueued (or a skip) while you look.
export const useScheduleFires = (id: number, refetchInterval = 5000) =>
  useQuery({ ...scheduleFiresQueryOptions(id), refetchInterval });
