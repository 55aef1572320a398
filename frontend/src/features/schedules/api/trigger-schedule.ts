import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { newIdempotencyKey } from '../../../lib/idempotency-key';

/** "Run now": a fresh Idempotency-Key per confirmed click, so a retried request cannot start two runs. */
export const useTriggerSchedule = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Run started' },
    mutationFn: ({ id, idempotencyKey = newIdempotencyKey() }: { id: number; idempotencyKey?: string }) =>
      unwrap(
        api.POST('/api/v1/schedules/{schedule_id}/trigger', {
          params: { path: { schedule_id: id }, header: { 'Idempotency-Key': idempotencyKey } },
        }),
      ),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['jobs'] }),
  });
};
