import type { Queue, QueueHistory } from '../../api/types';

export interface QueueLine {
  values: number[];
  /** Whether the values are the leader's per-minute samples (false: only this poll's count). */
  sampled: boolean;
}

export interface QueueLines {
  ready: QueueLine;
  running: QueueLine;
  latency: QueueLine;
}

export const queueKey = (q: Pick<Queue, 'project' | 'name'>) => `${q.project}/${q.name}`;

/**
 * Each queue's lines, oldest first, from the leader's per-minute samples (GET /queues/history):
 * there on arrival, not only from when the page was opened. A queue with no sample yet (new, or
 * no leader running) shows this poll's count alone. Pure, for tests.
 */
export function queueLines(history: QueueHistory[] | undefined, queues: Queue[]): Map<string, QueueLines> {
  const byKey = new Map((history ?? []).map((h) => [queueKey(h), h.samples]));
  const lines = new Map<string, QueueLines>();
  for (const q of queues) {
    const samples = byKey.get(queueKey(q)) ?? [];
    const line = (values: number[], now: number): QueueLine => (samples.length ? { values, sampled: true } : { values: [now], sampled: false });
    lines.set(queueKey(q), {
      ready: line(samples.map((s) => s.ready), q.pending),
      running: line(samples.map((s) => s.running), q.running),
      latency: line(samples.map((s) => s.latency_seconds), 0),
    });
  }
  return lines;
}

/** What a line says in words (the sparkline's accessible name): the chart is not the only source. */
export function describeLine(what: string, line: QueueLine, now: number, unit = ''): string {
  if (!line.sampled) return `${what}: ${now}${unit}`;
  const peak = Math.max(...line.values);
  return `${what}: ${now}${unit} now, peak ${Number.isInteger(peak) ? peak : peak.toFixed(1)}${unit} over the last ${line.values.length} min`;
}
