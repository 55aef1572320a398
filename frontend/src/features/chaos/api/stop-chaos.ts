import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { chaosQueryKey } from '../../../api/queries/list-chaos-experiments';

export const useStopChaos = () => {
  const qc = useQueryClient();
  return useMutation({
    meta: { success: 'Experiment stopped' },
    mutationFn: (id: number) => unwrap(api.DELETE('/api/v1/chaos/experiments/{experiment_id}', { params: { path: { experiment_id: id } } })),
    onSettled: () => qc.invalidateQueries({ queryKey: chaosQueryKey }),
  });
};
