import { describe, expect, it } from 'vitest';
import type { Queue } from '../../api/types';
import { addSample } from './queue-history';

const queue = (name: string, pending: number, running: number): Queue => ({
  project: 'default', name, pending, running, paused: false, paused_at: null, paused_by: null, paused_reason: null,
  concurrency_limit: null, per_key_limit: null, oldest_due_at: null, rate_limit_per_second: null,
});

describe('queue sparkline history', () => {
  it('appends one sample per poll, keeps the newest, and forgets queues that disappeared', () => {
    let history = addSample(new Map(), [queue('a', 5, 1), queue('b', 0, 0)], 3);
    history = addSample(history, [queue('a', 7, 2), queue('b', 1, 0)], 3);
    history = addSample(history, [queue('a', 9, 2)], 3);
    history = addSample(history, [queue('a', 4, 3)], 3);
    expect(history.get('default/a')).toEqual({ pending: [7, 9, 4], running: [2, 2, 3] });
    expect(history.has('default/b')).toBe(false);
  });
});
