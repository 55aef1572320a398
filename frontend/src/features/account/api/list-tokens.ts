import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** The signed-in user's own API tokens (never another user's; secrets are not in the list). */
export const tokensQueryKey = ['tokens'] as const;

export const listTokensQueryOptions = (cursor?: string) =>
  queryOptions({
    queryKey: [...tokensQueryKey, { cursor }],
    queryFn: () => unwrap(api.GET('/api/v1/tokens', { params: { query: { limit: 200, ...(cursor ? { cursor } : {}) } } })),
    placeholderData: keepPreviousData,
  });

export const useTokens = (cursor?: string) => useQuery(listTokensQueryOptions(cursor));
