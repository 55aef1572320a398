import { describe, expect, it } from 'vitest';
import { someWindowCounts, someWindows } from '../test/factories';
import { finishedOf, formatLag, formatRate, queuesByActivity, windowCounts } from './windows';

describe('dashboard windows', () => {
  it('formats a failure rate as a percentage, small ones with a decimal, and none as a dash', () => {
    expect(formatRate(null)).toBe('—');
    expect(formatRate(0)).toBe('0 %');
    expect(formatRate(0.75)).toBe('75 %');
    expect(formatRate(0.004)).toBe('0.4 %');
    expect(formatRate(0.0001)).toBe('<0.1 %');
    expect(formatRate(1)).toBe('100 %');
  });

  it('formats a claim lag in seconds, minutes and hours', () => {
    expect(formatLag(null)).toBe('—');
    expect(formatLag(0.42)).toBe('0.4 s');
    expect(formatLag(12.4)).toBe('12 s');
    expect(formatLag(185)).toBe('3 min 5 s');
    expect(formatLag(7260)).toBe('2 h 1 min');
  });

  it('gives the finished statuses their last hour and 24 hours, and the others none', () => {
    const w = someWindows({
      hour: { since: '', jobs: someWindowCounts({ succeeded: 3, dead: 2, cancelled: 1 }), deliveries: someWindowCounts({ dead: 99 }) },
      day: { since: '', jobs: someWindowCounts({ succeeded: 30, dead: 20, cancelled: 10 }), deliveries: someWindowCounts() },
    });
    expect(windowCounts(w, 'DEAD')).toEqual({ hour: 2, day: 20 });
    expect(windowCounts(w, 'SUCCEEDED')).toEqual({ hour: 3, day: 30 });
    expect(windowCounts(w, 'CANCELLED')).toEqual({ hour: 1, day: 10 });
    expect(windowCounts(w, 'PENDING')).toBeNull();
    expect(windowCounts(undefined, 'DEAD')).toBeNull();
  });

  it('says how many of the finished died', () => {
    expect(finishedOf(someWindowCounts({ succeeded: 1, dead: 3, cancelled: 5 }))).toBe('3 of 4');
  });

  it('lists the busiest queues first', () => {
    const q = (project: string, queue: string, hour: number, day: number) => ({
      project, queue, hour: someWindowCounts({ claimed: hour }), day: someWindowCounts({ claimed: day }),
    });
    const w = someWindows({ queues: [q('a', 'quiet', 0, 5), q('a', 'busy', 9, 9), q('b', 'idle', 0, 0), q('a', 'some', 0, 7)] });
    expect(queuesByActivity(w).map((x) => x.queue)).toEqual(['busy', 'some', 'quiet', 'idle']);
  });
});
