// @vitest-environment node
import { afterEach, describe, expect, it } from 'vitest';
import { newIdempotencyKey } from './idempotency-key';

describe('newIdempotencyKey', () => {
  // The shadowing property below hides the prototype's randomUUID; remove it again.
  afterEach(() => Reflect.deleteProperty(crypto, 'randomUUID'));

  it('is a UUID v4, also where randomUUID is missing (plain HTTP)', () => {
    const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(newIdempotencyKey()).toMatch(v4);
    Object.defineProperty(crypto, 'randomUUID', { value: undefined, configurable: true });
    const keys = new Set(Array.from({ length: 50 }, newIdempotencyKey));
    expect(keys.size).toBe(50);
    for (const k of keys) expect(k).toMatch(v4);
  });
});
