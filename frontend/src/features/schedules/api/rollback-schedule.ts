import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** POST /schedules/{id}/rollback: a new version equal to `version`. */
export const useRollbackSchedule = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Schedule rolled back' },
    mutationFn: ({ id, version }: { id: number; version: number }) =>
      unwrap(api.POST('/api/v1/schedules/{schedule_id}/rollback', { params: { path: { schedule_id: id } }, body: { version } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['schedules'] }),
  });
};
