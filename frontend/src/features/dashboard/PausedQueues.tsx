import { Alert, Anchor, Text } from '@mantine/core';
import { Link } from 'react-router';
import { useQueues } from '../../api/queries/list-queues';
import { RelativeTime } from '../../components/RelativeTime';

/** Paused queues, with who paused them and why: their jobs wait, so the dashboard says so. */
export function PausedQueues({ refetchInterval }: { refetchInterval: number | false }) {
  const queues = useQueues(refetchInterval);
  const paused = (queues.data ?? []).filter((q) => q.paused);
  if (!paused.length) return null;
  return (
    <Alert color="yellow" title={paused.length === 1 ? 'A queue is paused' : `${paused.length} queues are paused`} role="status">
      {paused.map((q) => (
        <Text key={`${q.project}/${q.name}`} size="sm" data-paused-queue={`${q.project}/${q.name}`}>
          <b>
            {q.project}/{q.name}
          </b>{' '}
          paused by {q.paused_by ?? 'unknown'} <RelativeTime iso={q.paused_at} />
          {q.paused_reason ? `: ${q.paused_reason}` : ''} — {q.pending} pending.{' '}
          <Anchor component={Link} to="/queues" size="sm" underline="always">
            Queues
          </Anchor>
        </Text>
      ))}
    </Alert>
  );
}
