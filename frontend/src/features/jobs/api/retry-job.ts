import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const useRetryJob = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Job queued for retry' },
    mutationFn: (id: number) => unwrap(api.POST('/api/v1/jobs/{job_id}/retry', { params: { path: { job_id: id } } })),
    onSettled: () => qc.invalidateQueries({ queryKey: ['jobs'] }),
  });
};
