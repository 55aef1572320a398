import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const useCancelJob = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: (job) => ((job as { status?: string }).status === 'CANCELLED' ? 'Job cancelled' : 'Cancel requested: the job stops when its attempt ends') },
    mutationFn: (id: number) => unwrap(api.POST('/api/v1/jobs/{job_id}/cancel', { params: { path: { job_id: id } } })),
    onSettled: () => qc.invalidateQueries({ queryKey: ['jobs'] }),
  });
};
