import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** One project with its quotas and current usage (the usage bars). */
export const getProjectQueryOptions = (slug: string) =>
  queryOptions({
    queryKey: ['projects', slug],
    queryFn: () => unwrap(api.GET('/api/v1/projects/{slug}', { params: { path: { slug } } })),
  });

export const useProject = (slug: string) => useQuery(getProjectQueryOptions(slug));
