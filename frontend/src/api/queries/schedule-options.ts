import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../client';

export interface ScheduleOption {
  value: string;
  label: string;
}

const label = (s: { name: string; deleted_at?: string | null }) => (s.deleted_at ? `${s.name} (deleted)` : s.name);

/**
 * Choices for a schedule picker: the schedules the server finds for what is typed (its search: #id,
 * name prefixes; deleted ones too, since old jobs point at them), and the chosen one wherever it is
 * in the registry — a picker never needs a page holding every schedule.
 */
export function useScheduleOptions(search: string, selectedId: number | undefined): ScheduleOption[] {
  const q = search.trim();
  const found = useQuery({
    queryKey: ['schedules', 'options', q],
    queryFn: () => unwrap(api.GET('/api/v1/schedules', { params: { query: { q: q || undefined, include_deleted: true, limit: 50 } } })),
    staleTime: 60_000,
    placeholderData: keepPreviousData,
  });
  const items = found.data?.items ?? [];
  const listed = selectedId === undefined || items.some((s) => s.id === selectedId);
  const selected = useQuery({
    queryKey: ['schedules', 'detail', selectedId],
    queryFn: () => unwrap(api.GET('/api/v1/schedules/{schedule_id}', { params: { path: { schedule_id: selectedId as number } } })),
    enabled: !listed,
    staleTime: 60_000,
  });
  const options = items.map((s) => ({ value: String(s.id), label: label(s) }));
  if (!listed && selectedId !== undefined) {
    options.unshift({ value: String(selectedId), label: selected.data ? label(selected.data) : `#${selectedId}` });
  }
  return options;
}
