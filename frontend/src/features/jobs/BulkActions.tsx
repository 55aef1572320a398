import { Alert, Anchor, Button, Group, List, Modal, Paper, Stack, Text, Textarea } from '@mantine/core';
import { useState } from 'react';
import { ApiError } from '../../api/problem';
import type { JobFilters } from '../../api/queries/list-jobs';
import type { JobStatus } from '../../api/types';
import { GatedButton } from '../../components/GatedButton';
import { useBulkJobs, type BulkAction, type BulkBody, type BulkResult } from './api/bulk-jobs';
import { useJobCount } from './api/count-jobs';
import { applicableBulkActions } from './bulk-applicable';

/** What the bulk bar acts on: the ticked rows, or every job the current filters match. */
export type Selection = { kind: 'ids'; ids: number[] } | { kind: 'filter'; filters: Omit<JobFilters, 'cursor' | 'limit'> };

const VERB: Record<BulkAction, string> = { cancel: 'Cancel', retry: 'Retry' };

/**
 * The bar above the jobs table once rows are ticked: "select all N matching" widens the selection
 * to the whole filter (counted by the server, refused above its limit), and each action asks for
 * the count to be confirmed and a reason (kept in the audit trail) before anything is sent.
 */
export function BulkActions({
  selectedIds,
  selectedStatuses,
  pageFull,
  filters,
  allMatching,
  onAllMatching,
  onClear,
}: {
  selectedIds: number[];
  /** The ticked rows' statuses (what "all matching" holds comes from the status filter). */
  selectedStatuses: readonly JobStatus[];
  pageFull: boolean;
  filters: Omit<JobFilters, 'cursor' | 'limit'>;
  allMatching: boolean;
  onAllMatching: (on: boolean) => void;
  onClear: () => void;
}) {
  const count = useJobCount(filters, pageFull || allMatching);
  const bulk = useBulkJobs();
  const [action, setAction] = useState<BulkAction | null>(null);
  const [reason, setReason] = useState('');
  const [result, setResult] = useState<{ action: BulkAction; result: BulkResult } | null>(null);
  const limit = count.data?.limit ?? 10_000;
  const matching = count.data?.count;
  const tooMany = matching !== undefined && matching > limit;
  const selected: Selection = allMatching ? { kind: 'filter', filters } : { kind: 'ids', ids: selectedIds };
  const n = allMatching ? matching : selectedIds.length;
  const offered = applicableBulkActions(allMatching ? filters.status ?? null : selectedStatuses);
  const label = n === undefined ? '…' : tooMany && allMatching ? `more than ${limit.toLocaleString()}` : n.toLocaleString();

  const submit = async () => {
    if (!action) return;
    const body: BulkBody =
      selected.kind === 'ids'
        ? { ids: selected.ids, reason: reason.trim() }
        : { filter: { ...selected.filters, status: selected.filters.status ?? [] }, reason: reason.trim() };
    let res: BulkResult;
    try {
      res = await bulk.mutateAsync({ action, body });
    } catch {
      return; // shown in the dialog from bulk.error
    }
    setResult({ action, result: res });
    setAction(null);
    setReason('');
    onClear();
  };

  return (
    <Stack gap="xs">
      {(selectedIds.length > 0 || allMatching) && (
        <Paper withBorder p="xs" aria-label="Bulk actions" role="region">
          <Group justify="space-between" wrap="wrap">
            <Group gap="xs">
              <Text size="sm" fw={500} data-testid="bulk-selected">
                {label} selected
              </Text>
              {pageFull && !allMatching && matching !== undefined && matching > selectedIds.length && (
                <Anchor component="button" size="sm" onClick={() => onAllMatching(true)}>
                  Select all {tooMany ? `${limit.toLocaleString()}+` : matching.toLocaleString()} matching
                </Anchor>
              )}
              <Anchor component="button" size="sm" onClick={onClear}>
                Clear selection
              </Anchor>
            </Group>
            <Group gap="xs">
              {offered.includes('cancel') && (
                <GatedButton operation="bulkCancelJobs" size="xs" color="red" variant="light" disabled={tooMany && allMatching} onClick={() => setAction('cancel')}>
                  Cancel selected
                </GatedButton>
              )}
              {offered.includes('retry') && (
                <GatedButton operation="bulkRetryJobs" size="xs" variant="light" disabled={tooMany && allMatching} onClick={() => setAction('retry')}>
                  Retry selected
                </GatedButton>
              )}
              {offered.length === 0 && (
                <Text size="sm" c="dimmed" data-testid="bulk-nothing">
                  Succeeded jobs can be neither cancelled nor retried.
                </Text>
              )}
            </Group>
          </Group>
          {tooMany && allMatching && (
            <Text size="xs" c="red" mt={4}>
              A bulk action takes at most {limit.toLocaleString()} jobs: narrow the filters.
            </Text>
          )}
        </Paper>
      )}
      {result && (
        <Alert
          color={result.result.skipped.length ? 'yellow' : 'green'}
          title={`${VERB[result.action]}: ${result.result.changed} of ${result.result.matched} changed`}
          withCloseButton
          onClose={() => setResult(null)}
          data-testid="bulk-result"
        >
          {result.result.skipped.length > 0 && (
            <>
              <Text size="sm">{result.result.skipped.length} skipped:</Text>
              <List size="xs">
                {result.result.skipped.slice(0, 10).map((s) => (
                  <List.Item key={s.id}>
                    #{s.id}: {s.reason}
                  </List.Item>
                ))}
                {result.result.skipped.length > 10 && <List.Item>…and {result.result.skipped.length - 10} more</List.Item>}
              </List>
            </>
          )}
        </Alert>
      )}
      <Modal opened={action !== null} onClose={() => setAction(null)} title={action ? `${VERB[action]} ${label} jobs?` : ''} centered>
        <Stack>
          <Text size="sm">
            {action === 'cancel'
              ? 'Pending jobs are cancelled now; running ones are asked to stop. Finished jobs are skipped.'
              : 'Dead and cancelled jobs go back to PENDING with one more attempt. Others are skipped.'}{' '}
            {selected.kind === 'filter' ? 'Every job matching the current filters is included, not only this page.' : ''}
          </Text>
          <Textarea
            label="Reason"
            description="Required; kept in the audit trail with the count and the selection."
            required
            autosize
            minRows={2}
            value={reason}
            onChange={(e) => setReason(e.currentTarget.value)}
            data-autofocus
          />
          {bulk.error && (
            <Alert color="red" title="Not done">
              {bulk.error instanceof ApiError ? bulk.error.message : String(bulk.error)}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setAction(null)}>
              Back
            </Button>
            <Button color={action === 'cancel' ? 'red' : 'blue'} disabled={!reason.trim()} loading={bulk.isPending} onClick={() => void submit()}>
              {action ? `${VERB[action]} ${label} jobs` : ''}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}
