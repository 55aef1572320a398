import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const verifyAuditQueryOptions = () =>
  queryOptions({
    queryKey: ['audit', 'verify'],
    queryFn: () => unwrap(api.GET('/api/v1/audit/verify')),
    staleTime: 30_000,
  });

export const useVerifyAudit = (enabled: boolean) => useQuery({ ...verifyAuditQueryOptions(), enabled });
