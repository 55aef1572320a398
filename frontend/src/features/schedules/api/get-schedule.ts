import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const scheduleQueryOptions = (id: number) =>
  queryOptions({
    queryKey: ['schedules', 'detail', id],
    queryFn: () => unwrap(api.GET('/api/v1/schedules/{schedule_id}', { params: { path: { schedule_id: id } } })),
  });

export const useSchedule = (id: number, enabled = true) => useQuery({ ...scheduleQueryOptions(id), enabled });
