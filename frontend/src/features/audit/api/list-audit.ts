import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { components } from '../../../api/schema';

type AuditAction = components['schemas']['AuditEvent']['action'];

export interface AuditFilters {
  actor?: string;
  action?: string;
  target_type?: string;
  target_id?: string;
  at_after?: string;
  at_before?: string;
  exclude_action?: AuditAction[];
  /** Runs of these actions by one actor in one project come as one row with `group`. */
  group?: AuditAction[];
  from_id?: number;
  to_id?: number;
  cursor?: string;
}

export const listAuditQueryOptions = (filters: AuditFilters) =>
  queryOptions({
    queryKey: ['audit', 'list', filters],
    queryFn: () => unwrap(api.GET('/api/v1/audit', { params: { query: filters } })),
    placeholderData: keepPreviousData,
  });

export const useAudit = (filters: AuditFilters, enabled: boolean) => useQuery({ ...listAuditQueryOptions(filters), enabled });
