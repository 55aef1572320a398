import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** POST /jobs/{id}/rerun: a new job copying this one, with the given changes (trigger "rerun"). */
export const useRerunJob = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Job re-run submitted' },
    mutationFn: ({ id, payload, priority, queue }: { id: number; payload?: Record<string, unknown>; priority?: number; queue?: string }) =>
      unwrap(api.POST('/api/v1/jobs/{job_id}/rerun', { params: { path: { job_id: id } }, body: { payload, priority, queue } })),
    onSettled: () => qc.invalidateQueries({ queryKey: ['jobs'] }),
  });
};
