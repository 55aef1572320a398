import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const usersQueryKey = ['users'] as const;

export interface UserFilters {
  /** `#7` is user 7, `7` that user or a name starting 7, other words prefixes of the username. */
  q?: string;
  cursor?: string;
}

export const listUsersQueryOptions = (filters: UserFilters = {}) =>
  queryOptions({
    queryKey: [...usersQueryKey, filters],
    queryFn: () => unwrap(api.GET('/api/v1/users', { params: { query: { limit: 200, ...filters } } })),
    placeholderData: keepPreviousData,
  });

export const useUsers = (filters: UserFilters = {}) => useQuery(listUsersQueryOptions(filters));
