import { describe, expect, it } from 'vitest';
import { payloadDiff } from './payload-diff';

describe('payloadDiff', () => {
  it('lists changed, added and removed keys only, sorted', () => {
    expect(payloadDiff({ a: 1, b: { x: 1 }, c: 3 }, { a: 1, b: { x: 2 }, d: 4 })).toEqual([
      ['b', { x: 1 }, { x: 2 }],
      ['c', 3, undefined],
      ['d', undefined, 4],
    ]);
  });
  it('is empty for equal payloads', () => {
    expect(payloadDiff({ a: [1, 2] }, { a: [1, 2] })).toEqual([]);
  });
});
