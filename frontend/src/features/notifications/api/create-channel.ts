import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { NotificationChannelCreate } from '../../../api/types';

/** POST /notification-channels: the answer carries the signing secret, once. */
export const useCreateChannel = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: NotificationChannelCreate) => unwrap(api.POST('/api/v1/notification-channels', { body })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['notification-channels'] }),
  });
};
