import { queryOptions, useQuery } from '@tanstack/react-query';
import { allPages, MAX_PAGE } from '../all-pages';
import { api, unwrap } from '../client';

/** The caller's projects with its role in each; the header's switcher and the Projects pages.
 * Every page of the list (`GET /projects` is `{items, next_cursor}`), so the switcher sees all. */
export const projectsQueryKey = ['projects'] as const;

export const listProjectsQueryOptions = () =>
  queryOptions({
    queryKey: projectsQueryKey,
    queryFn: () =>
      allPages((cursor) => unwrap(api.GET('/api/v1/projects', { params: { query: { limit: MAX_PAGE, cursor } } }))),
    staleTime: 30_000,
  });

export const useProjects = (enabled = true) => useQuery({ ...listProjectsQueryOptions(), enabled });
