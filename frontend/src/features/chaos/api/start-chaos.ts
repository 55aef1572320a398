import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { chaosQueryKey } from '../../../api/queries/list-chaos-experiments';
import type { ChaosCreate } from '../../../api/types';

export const useStartChaos = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Experiment started' },
    mutationFn: (body: ChaosCreate) => unwrap(api.POST('/api/v1/chaos/experiments', { body })),
    onSettled: () => qc.invalidateQueries({ queryKey: chaosQueryKey }),
  });
};
