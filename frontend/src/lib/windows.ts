import type { StatsWindows, WindowCounts } from '../api/types';

/** "75 %", "0.4 %", "—" when nothing finished: dead among the finished (cancelled ones are neither). */
export function formatRate(rate: number | null | undefined): string {
  if (rate === null || rate === undefined) return '—';
  const percent = rate * 100;
  if (percent === 0 || percent >= 10) return `${Math.round(percent)} %`;
  return `${percent < 0.1 ? '<0.1' : percent.toFixed(1)} %`;
}

/** A claim lag: "0.4 s", "12 s", "3 min 5 s", "—" without claims. */
export function formatLag(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** The status cards that have a window: the statuses a job reaches once (finished). */
export const WINDOWED = { SUCCEEDED: 'succeeded', DEAD: 'dead', CANCELLED: 'cancelled' } as const satisfies Record<string, keyof WindowCounts>;

/** The last hour's and 24 hours' count of a finished status for its card, or null for a status without one. */
export function windowCounts(windows: StatsWindows | undefined, status: string): { hour: number; day: number } | null {
  const key = WINDOWED[status as keyof typeof WINDOWED];
  if (!windows || !key) return null;
  return { hour: windows.hour.jobs[key] as number, day: windows.day.jobs[key] as number };
}

/** "12 of 16 finished" — the count behind a rate. */
export function finishedOf(c: WindowCounts): string {
  return `${c.dead} of ${c.succeeded + c.dead}`;
}

/** The queues to list for latency: the busiest first (claims in the last hour, then in 24 hours), deliveries' queue last. */
export function queuesByActivity(windows: StatsWindows): StatsWindows['queues'] {
  return [...windows.queues].sort(
    (a, b) => b.hour.claimed - a.hour.claimed || b.day.claimed - a.day.claimed || a.project.localeCompare(b.project) || a.queue.localeCompare(b.queue),
  );
}
