import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const useDeleteChannel = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE('/api/v1/notification-channels/{channel_id}', { params: { path: { channel_id: id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['notification-channels'] }),
  });
};
