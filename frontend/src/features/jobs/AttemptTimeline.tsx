import { Code, Text, Timeline } from '@mantine/core';
import type { Attempt } from '../../api/types';
import { FailureText } from '../../components/FailureText';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { formatDuration } from '../../lib/time';

const FINISH_WORD: Record<string, string> = {
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  TIMED_OUT: 'Timed out',
  CANCELLED: 'Cancelled',
  INTERRUPTED: 'Interrupted: its worker shut down; given back (does not use up an attempt)',
};

/** What ended an attempt, in words; LOST says which of the two it was (the API's lost_reason). */
export function finishWord(a: Attempt): string {
  if (a.status === 'LOST') {
    return a.lost_reason === 'released_at_shutdown'
      ? 'Released when its worker shut down (does not use up an attempt)'
      : 'Lost: lease expired (worker died or stalled), reclaimed by the watchdog';
  }
  return FINISH_WORD[a.status] ?? a.status;
}

const ms = (iso: string | null | undefined) => (iso ? new Date(iso).getTime() : NaN);

/** "2 of at most 4 attempts", and why the limit grew when releases at shutdown gave attempts back. */
export function attemptCountText(attemptCount: number, maxAttempts: number, attempts: Attempt[]): string {
  const released = attempts.filter((a) => a.lost_reason === 'released_at_shutdown').length;
  const interrupted = attempts.filter((a) => a.status === 'INTERRUPTED').length;
  if (interrupted > 0) {
    return `${attemptCount - interrupted} of at most ${maxAttempts} attempts (and ${interrupted} interrupted at shutdown, not counted)`;
  }
  const base = `${attemptCount} of at most ${maxAttempts} attempts`;
  if (released === 0) return base;
  return `${base} (the limit includes ${released} extra for ${released === 1 ? 'an attempt' : 'attempts'} released at shutdown)`;
}

/** One block per attempt: when it waited (backoff), who ran it, how long, and how it ended. */
export function AttemptTimeline({ attempts, jobError }: { attempts: Attempt[]; jobError?: string | null }) {
  if (attempts.length === 0) return <Text c="dimmed">No attempts yet.</Text>;
  return (
    <Timeline active={attempts.length} bulletSize={18} lineWidth={2} aria-label="Attempts">
      {attempts.map((a, i) => {
        const previous = i > 0 ? attempts[i - 1] : undefined;
        const gap = previous ? ms(a.started_at) - ms(previous.finished_at) : NaN;
        const ran = ms(a.finished_at) - ms(a.started_at);
        return (
          <Timeline.Item
            key={a.number}
            title={
              <>
                Attempt {a.number} <StatusBadge status={a.status} />
              </>
            }
          >
            {Number.isFinite(gap) && (
              <Text size="sm" c="dimmed">
                Waited {formatDuration(gap)} after attempt {previous?.number} (retry backoff)
              </Text>
            )}
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
                {finishWord(a)} <RelativeTime iso={a.finished_at} />
                {Number.isFinite(ran) && <> · ran {formatDuration(ran)}</>}
              </Text>
            )}
            {a.error && <FailureText error={a.error} headlineOnly={a.error === jobError} />}
          </Timeline.Item>
        );
      })}
    </Timeline>
  );
}
