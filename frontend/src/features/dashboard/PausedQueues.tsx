import { Alert, Anchor, Text } from '@mantine/core';
import { Link } from 'react-router';
import { useQueues } from '../../api/queries/list-queues';
import { RelativeTime } from '../../components/RelativeTime';

/** The Queues page narrowed to one queue (its `?queue=project/name` filter). */
export const queuePageLink = (project: string, name: string) => `/queues?queue=${encodeURIComponent(`${project}/${name}`)}`;

/** Paused queues, with who paused them and why: their jobs wait, so the dashboard says so. Each
 * names its queue as a link to that queue on the Queues page, where Resume is (review 2026-12-05
 * §5.8: the banner led to the whole list). */
export function PausedQueues({ refetchInterval }: { refetchInterval: number | false }) {
  const queues = useQueues(refetchInterval);
  const paused = (queues.data ?? []).filter((q) => q.paused);
  if (!paused.length) return null;
  return (
    <Alert color="yellow" title={paused.length === 1 ? 'A queue is paused' : `${paused.length} queues are paused`} role="status">
      {paused.map((q) => (
        <Text key={`${q.project}/${q.name}`} size="sm" data-paused-queue={`${q.project}/${q.name}`}>
          <Anchor component={Link} to={queuePageLink(q.project, q.name)} size="sm" fw={700} underline="always">
            {q.project}/{q.name}
          </Anchor>{' '}
          paused by {q.paused_by ?? 'unknown'} <RelativeTime iso={q.paused_at} />
          {q.paused_reason ? `: ${q.paused_reason}` : ''} — {q.pending} pending.
        </Text>
      ))}
    </Alert>
  );
}
