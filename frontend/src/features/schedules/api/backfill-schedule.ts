import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** POST /schedules/{id}/backfill: past fire times of a window; dry_run only previews them. */
export const useBackfillSchedule = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Backfill queued' },
    mutationFn: ({ id, after, before, dry_run }: { id: number; after: string; before: string; dry_run: boolean }) =>
      unwrap(
        api.POST('/api/v1/schedules/{schedule_id}/backfill', {
          params: { path: { schedule_id: id } },
          body: { after, before, dry_run },
        }),
      ),
    onSuccess: (_data, vars) => {
      if (!vars.dry_run) void qc.invalidateQueries({ queryKey: ['jobs'] });
    },
  });
};
