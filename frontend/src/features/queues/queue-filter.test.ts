import { describe, expect, it } from 'vitest';
import { matchesQueue } from './queue-filter';

const payments = { project: 'billing', name: 'payments.sync' };
const other = { project: 'default', name: 'payments.sync' };

describe('the queues page filter', () => {
  it('keeps the one queue an audit event names as project/name', () => {
    expect(matchesQueue(payments, { queue: 'billing/payments.sync' })).toBe(true);
    expect(matchesQueue(other, { queue: 'billing/payments.sync' })).toBe(false);
    expect(matchesQueue({ project: 'billing', name: 'payments' }, { queue: 'billing/payments.sync' })).toBe(false);
  });

  it('reads a bare name as that queue in every project', () => {
    expect(matchesQueue(payments, { queue: 'payments.sync' })).toBe(true);
    expect(matchesQueue(other, { queue: 'payments.sync' })).toBe(true);
    expect(matchesQueue(payments, { queue: 'payments' })).toBe(false);
  });

  it('searches word prefixes of the name, its parts and the project', () => {
    expect(matchesQueue(payments, { q: 'pay' })).toBe(true);
    expect(matchesQueue(payments, { q: 'SYNC' })).toBe(true);
    expect(matchesQueue(payments, { q: 'bill sync' })).toBe(true);
    expect(matchesQueue(payments, { q: 'ync' })).toBe(false);
    expect(matchesQueue(payments, { q: 'sync default' })).toBe(false);
    expect(matchesQueue(payments, { q: '  ' })).toBe(true);
  });
});
