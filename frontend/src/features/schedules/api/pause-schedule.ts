import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** POST /schedules/{id}/pause; with `until` the server resumes it by itself at that instant. */
export const usePauseSchedule = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Schedule paused' },
    mutationFn: ({ id, until, reason }: { id: number; until?: string | null; reason?: string | null }) =>
      unwrap(
        api.POST('/api/v1/schedules/{schedule_id}/pause', {
          params: { path: { schedule_id: id } },
          body: { until: until ?? null, reason: reason ?? null },
        }),
      ),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['schedules'] }),
  });
};
