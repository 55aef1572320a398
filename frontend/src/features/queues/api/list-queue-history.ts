import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { allPages, MAX_PAGE } from '../../../api/all-pages';

/** The leader samples once a minute: polling faster than this would only fetch the same minutes. */
export const HISTORY_MIN_INTERVAL_MS = 30_000;

export const queueHistoryQueryOptions = (refetchInterval: number | false = false) =>
  queryOptions({
    queryKey: ['queues', 'history'],
    // Every page of the scope's queues, each with its last hour (the API's default `since`).
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/v1/queues/history', { params: { query: { limit: MAX_PAGE, cursor } } }))),
    refetchInterval: refetchInterval === false ? false : Math.max(refetchInterval, HISTORY_MIN_INTERVAL_MS),
    retry: false,
  });

/** GET /queues/history: each queue's per-minute ready depth, running, latency and completions. */
export const useQueueHistory = (refetchInterval: number | false = false) => useQuery(queueHistoryQueryOptions(refetchInterval));
