import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../client';

/** The caller's projects with its role in each; the header's switcher and the Projects pages. */
export const projectsQueryKey = ['projects'] as const;

export const listProjectsQueryOptions = () =>
  queryOptions({
    queryKey: projectsQueryKey,
    queryFn: async () => (await unwrap(api.GET('/api/v1/projects'))).items,
    staleTime: 30_000,
  });

export const useProjects = (enabled = true) => useQuery({ ...listProjectsQueryOptions(), enabled });
