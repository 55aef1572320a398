import { Code, Text, Timeline } from '@mantine/core';
import type { Attempt } from '../../api/types';
import { FailureText } from '../../components/FailureText';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { formatDuration } from '../../lib/time';
import { attemptMarker, errorRepeats, repeatText, type AttemptGlyph } from './attempt-outcome';

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

const GLYPHS: Record<AttemptGlyph, React.ReactNode> = {
  check: <polyline points="3.5,8.5 6.5,11.5 12.5,4.5" />,
  cross: <path d="M4.5 4.5 11.5 11.5 M11.5 4.5 4.5 11.5" />,
  clock: <path d="M8 2.5a5.5 5.5 0 1 0 0.01 0 M8 5v3.5l2.5 1.5" />,
  dash: <path d="M4 8h8" />,
  bang: <path d="M8 3.5v5.5 M8 12v0.5" />,
  pause: <path d="M6 4.5v7 M10 4.5v7" />,
  dot: <circle cx="8" cy="8" r="2.5" fill="currentColor" />,
};

/** The shape inside an attempt's marker (drawn, so it needs no text contrast; the badge beside it
 * names the outcome in words). */
function AttemptGlyphIcon({ glyph }: { glyph: AttemptGlyph }) {
  return (
    <svg viewBox="0 0 16 16" width="12" height="12" fill="none" stroke="currentColor" strokeWidth="2.2" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" data-glyph={glyph}>
      {GLYPHS[glyph]}
    </svg>
  );
}

/** One block per attempt: when it waited (backoff), who ran it, how long, and how it ended. Its
 * marker is coloured and shaped by the outcome; an error several attempts share is shown once,
 * on the first of them, with "× N attempts" (review 2026-12-05 §5.14: four identical red blocks). */
export function AttemptTimeline({ attempts, jobError }: { attempts: Attempt[]; jobError?: string | null }) {
  if (attempts.length === 0) return <Text c="dimmed">No attempts yet.</Text>;
  const repeats = errorRepeats(attempts);
  return (
    <Timeline active={attempts.length} bulletSize={20} lineWidth={2} aria-label="Attempts">
      {attempts.map((a, i) => {
        const previous = i > 0 ? attempts[i - 1] : undefined;
        const gap = previous ? ms(a.started_at) - ms(previous.finished_at) : NaN;
        const ran = ms(a.finished_at) - ms(a.started_at);
        const marker = attemptMarker(a.status);
        const shown = repeats.get(a.number) ?? { kind: 'none' };
        return (
          <Timeline.Item
            key={a.number}
            color={marker.color}
            bullet={<AttemptGlyphIcon glyph={marker.glyph} />}
            data-outcome={a.status}
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
                    {/* "lease until in 30 seconds" read wrong (review 2026-12-05 §2, job detail). */}
                    , lease {Date.parse(a.lease_expires_at) > Date.now() ? 'expires' : 'expired'} <RelativeTime iso={a.lease_expires_at} />
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
            {a.error && shown.kind === 'first' && (
              <>
                <FailureText error={a.error} headlineOnly={a.error === jobError} />
                {shown.count > 1 && (
                  <Text size="sm" fw={600} data-testid="error-repeats">
                    {repeatText(shown.numbers)}
                  </Text>
                )}
              </>
            )}
            {shown.kind === 'repeat' && (
              <Text size="sm" c="dimmed">
                Same error as attempt {shown.of}.
              </Text>
            )}
          </Timeline.Item>
        );
      })}
    </Timeline>
  );
}
