import { describe, expect, it } from 'vitest';
import { changedFields } from './version-changes';

describe("a version's changes as rows", () => {
  it('keeps plain fields as they are', () => {
    expect(changedFields({ cron: ['0 0 * * * *', '0 30 * * * *'], paused: [false, true] })).toEqual([
      ['cron', '0 0 * * * *', '0 30 * * * *'],
      ['paused', false, true],
    ]);
  });

  it('spells an object out as the keys that changed, compared by content, not key order', () => {
    const before = { on_failure: false, max_lateness_seconds: 60, thresholds: { a: 1, b: 2 } };
    const after = { thresholds: { b: 2, a: 1 }, max_lateness_seconds: 120, on_failure: false };
    expect(changedFields({ alerts: [before, after] })).toEqual([['alerts.max_lateness_seconds', 60, 120]]);
  });

  it('lists every key of an object that was created, and says so once when nothing inside changed', () => {
    expect(changedFields({ alerts: [null, { on_failure: true }] })).toEqual([['alerts.on_failure', undefined, true]]);
    expect(changedFields({ payload: [null, {}] })).toEqual([['payload', null, {}]]);
  });

  it('leaves arrays whole', () => {
    expect(changedFields({ notify: [['a'], ['a', 'b']] })).toEqual([['notify', ['a'], ['a', 'b']]]);
  });
});
