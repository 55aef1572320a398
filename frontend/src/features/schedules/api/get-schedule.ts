import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const scheduleQueryOptions = (id: number) =>
  queryOptions({
    queryKey: ['schedules', 'detail', id],
    queryFn: () => unwrap(api.GET('/api/v1/schedules/{schedule_id}', { params: { path: { schedule_id: id } } })),
  });

/** With an interval, the detail page stays current: a pause or edit made elsewhere (the API, another
 * tab) shows in its state badge within one interval. */
export const useSchedule = (id: number, enabled = true, refetchInterval: number | false = false) =>
  useQuery({
    ...scheduleQueryOptions(id),
    enabled,
    // A deleted schedule never changes again: polling it would only repeat DELETED.
    refetchInterval: (query) => (query.state.data?.deleted_at ? false : refetchInterval),
  });
