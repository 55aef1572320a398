import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const useResumeSchedule = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Schedule resumed' },
    mutationFn: (id: number) => unwrap(api.POST('/api/v1/schedules/{schedule_id}/resume', { params: { path: { schedule_id: id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['schedules'] }),
  });
};
