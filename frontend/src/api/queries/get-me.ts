import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../client';
import { ApiError, toApiError } from '../problem';
import type { SignedIn } from '../types';

export const meQueryKey = ['auth', 'me'] as const;

/** Who is signed in; `null` (not an error) when nobody is. */
export const meQueryOptions = () =>
  queryOptions({
    queryKey: meQueryKey,
    queryFn: async (): Promise<SignedIn | null> => {
      const { data, error, response } = await api.GET('/api/v1/auth/me');
      if (response.status === 401) return null;
      if (!response.ok) throw toApiError(error, response);
      return data ?? null;
    },
    staleTime: 60_000,
    retry: (count, err) => !(err instanceof ApiError) && count < 2,
  });

export const useMe = () => useQuery(meQueryOptions());
