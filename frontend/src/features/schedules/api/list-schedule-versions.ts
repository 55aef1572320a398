import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** GET /schedules/{id}/versions: newest first, each with {field: [old, new]}. */
export const useScheduleVersions = (id: number) =>
  useQuery({
    queryKey: ['schedules', 'versions', id],
    queryFn: () => unwrap(api.GET('/api/v1/schedules/{schedule_id}/versions', { params: { path: { schedule_id: id } } })),
  });
