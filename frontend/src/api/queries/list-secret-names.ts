import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../client';
import { scopedProject } from '../project-scope';

/** Names of the current project's secrets a payload may reference (`{"$secret": NAME}`); never values.
 * Secrets belong to a project: the scope's `project` is added to the request (api/project-scope.ts). */
export const listSecretNamesQueryOptions = () =>
  queryOptions({
    queryKey: ['secrets', 'names', scopedProject()],
    queryFn: async () => (await unwrap(api.GET('/api/v1/secrets'))).names,
    staleTime: 60_000,
  });

export const useSecretNames = (enabled = true) => useQuery({ ...listSecretNamesQueryOptions(), enabled });
