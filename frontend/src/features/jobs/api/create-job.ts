import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { JobCreate } from '../../../api/types';

/** The caller supplies the Idempotency-Key (one per form submission intent), so a double submit makes one job. */
export const useCreateJob = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Job submitted' },
    mutationFn: ({ body, idempotencyKey }: { body: JobCreate; idempotencyKey: string }) =>
      unwrap(api.POST('/api/v1/jobs', { body, params: { header: { 'Idempotency-Key': idempotencyKey } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['jobs'] }),
  });
};
