import { describe, expect, it } from 'vitest';
import type { Queue, QueueHistory } from '../../api/types';
import { describeLine, queueLines } from './queue-history';

const queue = (name: string, pending: number, running: number): Queue => ({
  project: 'default', name, pending, running, paused: false, paused_at: null, paused_by: null, paused_reason: null,
  concurrency_limit: null, per_key_limit: null, oldest_due_at: null, rate_limit_per_second: null,
});

const minute = (m: number, ready: number, running: number, latency = 0) => ({
  at: `2030-01-01T00:${String(m).padStart(2, '0')}:00Z`, ready, running, latency_seconds: latency, completed: 0,
});

describe('queue sparkline lines', () => {
  it('draw the leader\'s samples of each queue, oldest first, from the first render', () => {
    const history: QueueHistory[] = [{ project: 'default', name: 'a', samples: [minute(1, 5, 1, 2.5), minute(2, 9, 2, 30), minute(3, 4, 3, 0)] }];
    const lines = queueLines(history, [queue('a', 4, 3)]);
    expect(lines.get('default/a')).toEqual({
      ready: { values: [5, 9, 4], sampled: true },
      running: { values: [1, 2, 3], sampled: true },
      latency: { values: [2.5, 30, 0], sampled: true },
    });
  });

  it('fall back to the current count for a queue the leader has not sampled yet', () => {
    const lines = queueLines([{ project: 'default', name: 'a', samples: [] }], [queue('a', 7, 1), queue('b', 2, 0)]);
    expect(lines.get('default/a')?.ready).toEqual({ values: [7], sampled: false });
    expect(lines.get('default/b')?.running).toEqual({ values: [0], sampled: false });
  });

  it('say the current value and the peak in words', () => {
    expect(describeLine('Ready in default/a', { values: [5, 9, 4], sampled: true }, 4)).toBe('Ready in default/a: 4 now, peak 9 over the last 3 min');
    expect(describeLine('Ready in default/a', { values: [7], sampled: false }, 7)).toBe('Ready in default/a: 7');
  });
});
