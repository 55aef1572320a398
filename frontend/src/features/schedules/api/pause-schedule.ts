import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const usePauseSchedule = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => unwrap(api.POST('/api/v1/schedules/{schedule_id}/pause', { params: { path: { schedule_id: id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['schedules'] }),
  });
};
