import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { HealthState } from '../../../api/types';

// What needs a person: a schedule whose runs die, whose fires do not start, or that stopped succeeding.
export const ATTENTION: HealthState[] = ['failing', 'late', 'silent'];

/** GET /schedules?health=failing&health=late&health=silent, refetched with the dashboard. */
export const useAttentionSchedules = (refetchInterval: number | false) =>
  useQuery({
    queryKey: ['schedules', 'attention'],
    queryFn: () => unwrap(api.GET('/api/v1/schedules', { params: { query: { health: ATTENTION, limit: 20 } } })),
    refetchInterval,
  });
