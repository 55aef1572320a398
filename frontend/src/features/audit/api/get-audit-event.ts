import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** One event with its details whole (the list caps them at 4 KiB). */
export const getAuditEventQueryOptions = (id: number) =>
  queryOptions({
    queryKey: ['audit', 'event', id],
    queryFn: () => unwrap(api.GET('/api/v1/audit/{event_id}', { params: { path: { event_id: id } } })),
    staleTime: Infinity,
  });

export const useAuditEvent = (id: number, enabled: boolean) => useQuery({ ...getAuditEventQueryOptions(id), enabled });
