import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export type UsageGranularity = 'hour' | 'day';

/** A project's usage by hour (last 24 h) or UTC day (last 30 days), as the API keeps it. */
export const getUsageQueryOptions = (slug: string, granularity: UsageGranularity) =>
  queryOptions({
    queryKey: ['projects', slug, 'usage', granularity],
    queryFn: () => unwrap(api.GET('/api/v1/projects/{slug}/usage', { params: { path: { slug }, query: { granularity } } })),
  });

export const useUsage = (slug: string, granularity: UsageGranularity, enabled: boolean) =>
  useQuery({ ...getUsageQueryOptions(slug, granularity), enabled });
