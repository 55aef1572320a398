import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { ScheduleUpdate } from '../../../api/types';

/** Sends If-Match with the version the form was loaded from, so a concurrent edit is a 412, not a lost update. */
export const useUpdateSchedule = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Schedule saved' },
    mutationFn: ({ id, version, body }: { id: number; version: number; body: ScheduleUpdate }) =>
      unwrap(
        api.PATCH('/api/v1/schedules/{schedule_id}', {
          params: { path: { schedule_id: id }, header: { 'If-Match': `"${version}"` } },
          body,
        }),
      ),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['schedules'] }),
  });
};
