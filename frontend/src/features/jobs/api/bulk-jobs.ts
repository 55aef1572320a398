import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { components } from '../../../api/schema';

export type BulkAction = 'cancel' | 'retry';
export type BulkBody = components['schemas']['BulkAction'];
export type BulkResult = components['schemas']['BulkResult'];

/** POST /jobs/bulk/{cancel|retry}: ids or a GET /jobs filter, with a reason (audited). */
export const useBulkJobs = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ action, body }: { action: BulkAction; body: BulkBody }) =>
      action === 'cancel'
        ? unwrap(api.POST('/api/v1/jobs/bulk/cancel', { body }))
        : unwrap(api.POST('/api/v1/jobs/bulk/retry', { body })),
    onSettled: () => qc.invalidateQueries({ queryKey: ['jobs'] }),
  });
};
