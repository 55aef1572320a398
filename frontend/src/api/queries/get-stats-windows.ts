import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../client';

/** The windows move by 10-minute buckets: polled with the dashboard, but never more often than this. */
export const WINDOWS_MIN_INTERVAL_MS = 30_000;

export const windowsQueryOptions = (refetchInterval: number | false) =>
  queryOptions({
    queryKey: ['stats-windows'],
    queryFn: () => unwrap(api.GET('/api/v1/stats/windows')),
    refetchInterval: refetchInterval === false ? false : Math.max(refetchInterval, WINDOWS_MIN_INTERVAL_MS),
    retry: false,
  });

/** GET /stats/windows: last hour and 24 hours, failure rates, claim lag, leader terms. */
export const useWindows = (refetchInterval: number | false) => useQuery(windowsQueryOptions(refetchInterval));
