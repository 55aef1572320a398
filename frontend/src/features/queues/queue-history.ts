import { useRef } from 'react';
import type { Queue } from '../../api/types';

export const HISTORY_SAMPLES = 60;

export interface QueueSamples {
  pending: number[];
  running: number[];
}

export const queueKey = (q: Pick<Queue, 'project' | 'name'>) => `${q.project}/${q.name}`;

/** Appends one poll's counts to each queue's history (at most `HISTORY_SAMPLES`); pure, for tests. */
export function addSample(history: Map<string, QueueSamples>, queues: Queue[], limit = HISTORY_SAMPLES): Map<string, QueueSamples> {
  const next = new Map<string, QueueSamples>();
  for (const q of queues) {
    const key = queueKey(q);
    const old = history.get(key) ?? { pending: [], running: [] };
    next.set(key, { pending: [...old.pending, q.pending].slice(-limit), running: [...old.running, q.running].slice(-limit) });
  }
  return next;
}

/** The depth and running history of every queue since the page opened: one sample per poll
 * (the API answers current counts; the page keeps the line). */
export function useQueueHistory(queues: Queue[] | undefined, updatedAt: number): Map<string, QueueSamples> {
  const state = useRef<{ at: number; history: Map<string, QueueSamples> }>({ at: -1, history: new Map() });
  if (queues && updatedAt !== state.current.at) {
    state.current = { at: updatedAt, history: addSample(state.current.history, queues) };
  }
  return state.current.history;
}
