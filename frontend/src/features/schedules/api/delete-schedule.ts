import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const useDeleteSchedule = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Schedule deleted' },
    mutationFn: (id: number) => unwrap(api.DELETE('/api/v1/schedules/{schedule_id}', { params: { path: { schedule_id: id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['schedules'] }),
  });
};
