import { describe, expect, it } from 'vitest';
import { compareFields, sameJson, showJson } from './json-compare';

describe('JSON compared by content', () => {
  it('ignores key order in objects at any depth, but not order in arrays', () => {
    expect(sameJson({ on_failure: false, max: null, n: { a: 1, b: [1, 2] } }, { n: { b: [1, 2], a: 1 }, max: null, on_failure: false })).toBe(true);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson({ a: [] }, { a: {} })).toBe(false);
    expect(sameJson('1', 1)).toBe(false);
  });

  it('takes an absent field and null as the same "no value"', () => {
    expect(sameJson({ a: null }, {})).toBe(true);
    expect(sameJson(undefined, null)).toBe(true);
    expect(sameJson(0, null)).toBe(false);
  });

  it('shows strings as themselves, short values on one line and long ones indented, keys sorted', () => {
    expect(showJson('flaky-etl')).toBe('flaky-etl');
    expect(showJson(null)).toBe('—');
    expect(showJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
    expect(showJson({ message: 'x'.repeat(60), a: 1 })).toBe(`{\n  "a": 1,\n  "message": "${'x'.repeat(60)}"\n}`);
  });

  it('lists the changed, added and removed fields first, then the unchanged ones', () => {
    const rows = compareFields({ a: 1, b: { x: 1, y: 2 }, c: 3, z: 0 }, { a: 1, b: { y: 2, x: 1 }, c: 4, d: 5 });
    expect(rows.map((r) => [r.field, r.change])).toEqual([
      ['c', 'changed'], ['d', 'added'], ['z', 'removed'], ['a', 'same'], ['b', 'same'],
    ]);
  });
});
