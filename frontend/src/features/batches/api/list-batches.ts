import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** Batches, newest first, in the project scope (api/project-scope.ts adds `project`). */
export const listBatchesQueryOptions = (cursor: string | null, refetchInterval: number | false = false) =>
  queryOptions({
    queryKey: ['batches', 'list', cursor],
    queryFn: () => unwrap(api.GET('/api/v1/batches', { params: { query: { cursor: cursor ?? undefined } } })),
    placeholderData: keepPreviousData,
    refetchInterval,
  });

export const useBatches = (cursor: string | null, refetchInterval: number | false = false) =>
  useQuery(listBatchesQueryOptions(cursor, refetchInterval));
