import { describe, expect, it } from 'vitest';
import { ApiError } from './problem';
import { MAX_BUSY_RETRIES, retryDelay, shouldRetry } from './retry-policy';

const problem = (status: number) => new ApiError({ type: 'about:blank', title: 't', status });

describe('query retry policy', () => {
  it('asks a busy search again, with growing pauses, a bounded number of times', () => {
    const busy = problem(429);
    expect([0, 1, 2, 3].map((n) => shouldRetry(n, busy))).toEqual([true, true, true, false]);
    expect(MAX_BUSY_RETRIES).toBe(3);
    expect([0, 1, 2].map((n) => retryDelay(n, busy))).toEqual([1000, 2000, 4000]);
  });

  it('never repeats another 4xx and asks once more after a 5xx or a network failure', () => {
    expect(shouldRetry(0, problem(404))).toBe(false);
    expect(shouldRetry(0, problem(422))).toBe(false);
    expect(shouldRetry(0, problem(503))).toBe(true);
    expect(shouldRetry(1, problem(503))).toBe(false);
    expect(shouldRetry(0, new TypeError('Failed to fetch'))).toBe(true);
  });
});
