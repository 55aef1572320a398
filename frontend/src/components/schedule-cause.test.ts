import { describe, expect, it } from 'vitest';
import { queueHref, scheduleCauses } from './schedule-cause';

const base = { project: 'default', queue: 'webhooks', paused: false, last_error: null };
const queues = [
  { project: 'default', name: 'webhooks', paused: true, paused_reason: 'vendor outage' },
  { project: 'payments', name: 'webhooks', paused: false },
];

describe('causes next to symptoms', () => {
  it("names the schedule's paused queue, in its own project only", () => {
    expect(scheduleCauses(base, queues)).toEqual([{ kind: 'queue-paused', queue: 'webhooks', project: 'default', reason: 'vendor outage' }]);
    expect(scheduleCauses({ ...base, project: 'payments' }, queues)).toEqual([]);
    expect(scheduleCauses(base, undefined)).toEqual([]);
  });

  it('a paused schedule says until when and why, and a failing one its last error', () => {
    const causes = scheduleCauses({ ...base, queue: 'default', paused: true, paused_until: '2026-12-12T00:00:00Z', pause_reason: 'holiday freeze', last_error: 'HandlerFailed: boom' }, queues);
    expect(causes).toEqual([
      { kind: 'paused', until: '2026-12-12T00:00:00Z', reason: 'holiday freeze' },
      { kind: 'error', headline: 'HandlerFailed: boom' },
    ]);
  });

  it('a deleted schedule has no cause to show', () => {
    expect(scheduleCauses({ ...base, deleted_at: '2026-12-05T00:00:00Z', last_error: 'x' }, queues)).toEqual([]);
  });

  it('links to the Queues page narrowed to that queue', () => {
    expect(queueHref('default', 'payments.sync')).toBe('/queues?queue=default%2Fpayments.sync');
  });
});
