import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, itemsOf, unwrap } from '../client';
import type { ChaosExperiment } from '../types';

export const chaosQueryKey = ['chaos', 'experiments'] as const;

export const listChaosQueryOptions = (refetchInterval: number | false = false, enabled = true) =>
  queryOptions({
    queryKey: chaosQueryKey,
    queryFn: async (): Promise<ChaosExperiment[]> => itemsOf(await unwrap(api.GET('/api/v1/chaos/experiments'))),
    refetchInterval,
    enabled,
  });

/** ADMIN only on the server; pass `enabled=false` for other roles instead of collecting 403s. */
export const useChaosExperiments = (refetchInterval: number | false = false, enabled = true) =>
  useQuery(listChaosQueryOptions(refetchInterval, enabled));
