import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** Another user's live API tokens (instance ADMIN: `GET /tokens?user_id=`); secrets are never listed. */
export const userTokensQueryKey = (userId: number) => ['users', userId, 'tokens'] as const;

export const listUserTokensQueryOptions = (userId: number, cursor?: string) =>
  queryOptions({
    queryKey: [...userTokensQueryKey(userId), { cursor }],
    queryFn: () =>
      unwrap(api.GET('/api/v1/tokens', { params: { query: { user_id: userId, limit: 200, ...(cursor ? { cursor } : {}) } } })),
    placeholderData: keepPreviousData,
  });

export const useUserTokens = (userId: number, cursor?: string) => useQuery(listUserTokensQueryOptions(userId, cursor));
