import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { ScheduleCreate } from '../../../api/types';

export const useCreateSchedule = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Schedule created' },
    mutationFn: (body: ScheduleCreate) => unwrap(api.POST('/api/v1/schedules', { body })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['schedules'] }),
  });
};
