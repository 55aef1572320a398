import { CancellableJobStatus, RetryableJobStatus } from '../../api/rules';
import type { JobStatus } from '../../api/types';
import type { BulkAction } from './api/bulk-jobs';

/**
 * The bulk actions that can change something in a selection, from the statuses it holds (the
 * ticked rows', or the status filter's when the selection is "all matching"). `null`: not known
 * (every status may match), so both are offered and the server skips what does not apply.
 * A selection of finished jobs offers no "Cancel selected" (review 2026-12-05 §5.14): the server
 * would skip every one of them.
 */
export function applicableBulkActions(statuses: readonly JobStatus[] | null): BulkAction[] {
  if (statuses === null || statuses.length === 0) return ['cancel', 'retry'];
  const has = (allowed: readonly string[]) => statuses.some((s) => allowed.includes(s));
  const actions: BulkAction[] = [];
  if (has(CancellableJobStatus)) actions.push('cancel');
  if (has(RetryableJobStatus)) actions.push('retry');
  return actions;
}
