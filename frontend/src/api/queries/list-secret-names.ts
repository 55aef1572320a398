import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../client';

/** Names of the secrets a payload may reference (`{"$secret": NAME}`); never values. */
export const listSecretNamesQueryOptions = () =>
  queryOptions({
    queryKey: ['secrets', 'names'],
    queryFn: async () => (await unwrap(api.GET('/api/v1/secrets'))).names,
    staleTime: 60_000,
  });

export const useSecretNames = (enabled = true) => useQuery({ ...listSecretNamesQueryOptions(), enabled });
