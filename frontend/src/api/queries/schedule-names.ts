import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../client';

/** Schedule id → name, for lists that show a job's schedule ("nightly-report", not "#6"). One
 * request for the first 200 schedules (deleted included: old jobs keep their name); a schedule
 * beyond them shows as #id. */
export function useScheduleNames(): Map<number, string> {
  const { data } = useQuery({
    queryKey: ['schedules', 'names'],
    queryFn: () => unwrap(api.GET('/api/v1/schedules', { params: { query: { include_deleted: true, limit: 200 } } })),
    staleTime: 60_000,
  });
  return new Map((data?.items ?? []).map((s) => [s.id, s.name]));
}
