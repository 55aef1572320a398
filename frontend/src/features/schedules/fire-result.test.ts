import { describe, expect, it } from 'vitest';
import { fireResult, RESULTS, resultCounts } from './fire-result';

describe('a fire is told by what became of it', () => {
  it('a fire that ran is its job: a dead run is red, never the green of "enqueued"', () => {
    expect(fireResult({ outcome: 'enqueued', job_status: 'DEAD' })).toBe('dead');
    expect(RESULTS.dead.color).toBe('red');
    expect(fireResult({ outcome: 'enqueued', job_status: 'SUCCEEDED' })).toBe('succeeded');
    expect(fireResult({ outcome: 'enqueued', job_status: 'RUNNING' })).toBe('running');
    expect(fireResult({ outcome: 'enqueued', job_status: 'PENDING' })).toBe('queued');
    expect(fireResult({ outcome: 'enqueued', job_status: null })).toBe('queued');
  });

  it('a fire that did not run says why, in amber or orange, drawn short', () => {
    expect(fireResult({ outcome: 'skipped_paused', job_status: null })).toBe('skipped_paused');
    expect(fireResult({ outcome: 'waiting_upstream', job_status: null })).toBe('waiting');
    for (const skip of ['skipped_paused', 'skipped_overlap', 'skipped_misfire', 'skipped_quota'] as const) {
      expect(['yellow', 'orange']).toContain(RESULTS[skip].color);
      expect(RESULTS[skip].shape).toBe('short');
    }
  });

  it('no two results share both colour and shape, so none is told by colour alone', () => {
    const looks = Object.values(RESULTS).map((r) => `${r.color}/${r.shape}`);
    const labels = Object.values(RESULTS).map((r) => r.label);
    expect(new Set(labels).size).toBe(labels.length);
    // Same look is allowed only among the skips (their label and tooltip tell them apart).
    const dupes = looks.filter((l, i) => looks.indexOf(l) !== i);
    expect(dupes.every((l) => l.endsWith('/short'))).toBe(true);
    const shapes = new Set(['succeeded', 'dead', 'running', 'skipped_overlap'].map((r) => RESULTS[r as keyof typeof RESULTS].shape));
    expect(shapes.size).toBe(4);
  });

  it('counts per result, in the legend order', () => {
    const counts = resultCounts([
      { outcome: 'enqueued', job_status: 'DEAD' },
      { outcome: 'enqueued', job_status: 'DEAD' },
      { outcome: 'skipped_overlap', job_status: null },
      { outcome: 'enqueued', job_status: 'SUCCEEDED' },
    ]);
    expect(counts).toEqual([['succeeded', 1], ['dead', 2], ['skipped_overlap', 1]]);
  });
});
