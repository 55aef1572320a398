import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, itemsOf, unwrap } from '../../../api/client';

/** Accounts to add as members: only an instance ADMIN can list users. */
export const listCandidatesQueryOptions = () =>
  queryOptions({
    queryKey: ['users', 'candidates'],
    queryFn: async () => itemsOf(await unwrap(api.GET('/api/v1/users', { params: { query: { limit: 200 } } }))),
  });

export const useCandidates = (enabled: boolean) => useQuery({ ...listCandidatesQueryOptions(), enabled });
