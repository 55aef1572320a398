import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const membersQueryKey = (slug: string) => ['projects', slug, 'members'] as const;

export const listMembersQueryOptions = (slug: string) =>
  queryOptions({
    queryKey: membersQueryKey(slug),
    queryFn: async () => (await unwrap(api.GET('/api/v1/projects/{slug}/members', { params: { path: { slug } } }))).items,
  });

export const useMembers = (slug: string) => useQuery(listMembersQueryOptions(slug));
