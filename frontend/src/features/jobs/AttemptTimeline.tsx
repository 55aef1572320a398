import { Code, Text, Timeline } from '@mantine/core';
import type { Attempt } from '../../api/types';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';

const FINISH_WORD: Record<string, string> = {
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  TIMED_OUT: 'Timed out',
  LOST: 'Lost (lease expired, reclaimed by the watchdog)',
  CANCELLED: 'Cancelled',
};

/** One block per attempt: claimed by a worker, last heartbeat, and how it ended. */
export function AttemptTimeline({ attempts }: { attempts: Attempt[] }) {
  if (attempts.length === 0) return <Text c="dimmed">No attempts yet.</Text>;
  return (
    <Timeline active={attempts.length} bulletSize={18} lineWidth={2} aria-label="Attempts">
      {attempts.map((a) => (
        <Timeline.Item key={a.number} title={<>Attempt {a.number} <StatusBadge status={a.status} /></>}>
          <Text size="sm">
            Claimed by <Code>{a.worker_id ?? '—'}</Code> <RelativeTime iso={a.started_at} />
          </Text>
          {a.heartbeat_at && (
            <Text size="sm" c="dimmed">
              Last heartbeat <RelativeTime iso={a.heartbeat_at} />
              {a.status === 'RUNNING' && a.lease_expires_at && (
                <>
                  , lease until <RelativeTime iso={a.lease_expires_at} />
                </>
              )}
            </Text>
          )}
          {a.finished_at && (
            <Text size="sm">
              {FINISH_WORD[a.status] ?? a.status} <RelativeTime iso={a.finished_at} />
            </Text>
          )}
          {a.error && (
            <Code block c="red" mt={4}>
              {a.error}
            </Code>
          )}
        </Timeline.Item>
      ))}
    </Timeline>
  );
}
