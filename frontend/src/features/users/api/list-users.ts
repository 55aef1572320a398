import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, itemsOf, unwrap } from '../../../api/client';

export const usersQueryKey = ['users'] as const;

export const listUsersQueryOptions = () =>
  queryOptions({
    queryKey: usersQueryKey,
    queryFn: async () => itemsOf(await unwrap(api.GET('/api/v1/users', { params: { query: { limit: 200 } } }))),
  });

export const useUsers = () => useQuery(listUsersQueryOptions());
