import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** POST /notification-channels/{id}/test: queues a notification.test delivery (a job). */
export const useTestChannel = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.POST('/api/v1/notification-channels/{channel_id}/test', { params: { path: { channel_id: id } } })),
    onSuccess: (_job, id) => qc.invalidateQueries({ queryKey: ['notification-channels', 'deliveries', id] }),
  });
};
