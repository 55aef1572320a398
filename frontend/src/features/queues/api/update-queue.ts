import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { queuesQueryKey } from '../../../api/queries/list-queues';
import type { QueueUpdate } from '../../../api/types';

/** Pause/resume (OPERATOR in the queue's project) or set its limits (ADMIN there). */
export const useUpdateQueue = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ project, name, body }: { project: string; name: string; body: QueueUpdate }) =>
      unwrap(api.PATCH('/api/v1/queues/{project}/{name}', { params: { path: { project, name } }, body })),
    onSettled: () => qc.invalidateQueries({ queryKey: queuesQueryKey }),
  });
};
