import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** Canonical form and next fire times as the scheduler computes them (the source of truth). */
export const describeCronQueryOptions = (expression: string, timezone: string, count = 5) =>
  queryOptions({
    queryKey: ['cron', 'describe', expression, timezone, count],
    queryFn: () => unwrap(api.POST('/api/v1/cron/describe', { body: { expression, timezone, count } })),
    staleTime: 30_000,
    retry: false,
    placeholderData: keepPreviousData,
  });

export const useDescribeCron = (expression: string, timezone: string, enabled: boolean) =>
  useQuery({ ...describeCronQueryOptions(expression, timezone), enabled });
