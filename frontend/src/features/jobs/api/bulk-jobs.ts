import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { components } from '../../../api/schema';

export type BulkAction = 'cancel' | 'retry';
export type BulkBody = components['schemas']['BulkAction'];
export type BulkResult = components['schemas']['BulkResult'];

const DONE: Record<BulkAction, string> = { cancel: 'Cancelled', retry: 'Retried' };
const jobs = (n: number) => `${n.toLocaleString('en-US')} ${n === 1 ? 'job' : 'jobs'}`;

/** The toast after a bulk action, in the server's numbers: "Cancelled 48 of 50 jobs (2 skipped)". */
export function bulkSuccessText(action: BulkAction, result: BulkResult): string {
  const skipped = result.skipped.length ? ` (${result.skipped.length.toLocaleString('en-US')} skipped)` : '';
  return result.changed === result.matched
    ? `${DONE[action]} ${jobs(result.changed)}`
    : `${DONE[action]} ${result.changed.toLocaleString('en-US')} of ${jobs(result.matched)}${skipped}`;
}

/** POST /jobs/bulk/{cancel|retry}: ids or a GET /jobs filter, with a reason (audited). */
export const useBulkJobs = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: (data, variables) => bulkSuccessText((variables as { action: BulkAction }).action, data as BulkResult) },
    mutationFn: ({ action, body }: { action: BulkAction; body: BulkBody }) =>
      action === 'cancel'
        ? unwrap(api.POST('/api/v1/jobs/bulk/cancel', { body }))
        : unwrap(api.POST('/api/v1/jobs/bulk/retry', { body })),
    onSettled: () => qc.invalidateQueries({ queryKey: ['jobs'] }),
  });
};
