import { describe, expect, it } from 'vitest';
import { emptyScheduleForm, toScheduleBody, validateScheduleForm } from './schedule-form';

describe('the alerts editor', () => {
  it('sends empty thresholds as null (off) and numbers as integers', () => {
    const v = { ...emptyScheduleForm(), name: 'n', handler: 'noop', on_failure: true, max_lateness_seconds: 30, notify: ['oncall'] };
    const body = toScheduleBody(v);
    expect(body.alerts).toEqual({
      on_failure: true,
      consecutive_failures: null,
      max_lateness_seconds: 30,
      max_runtime_seconds: null,
      no_success_within_seconds: null,
    });
    expect(body.notify).toEqual(['oncall']);
  });

  it('refuses thresholds the server would refuse, naming the field', () => {
    const v = { ...emptyScheduleForm(), name: 'n', handler: 'noop', consecutive_failures: 1, max_runtime_seconds: 0, no_success_within_seconds: 2.5 };
    const errors = validateScheduleForm(v);
    expect(errors.consecutive_failures).toMatch(/2 to 50/);
    expect(errors.max_runtime_seconds).toMatch(/at least 1/);
    expect(errors.no_success_within_seconds).toMatch(/whole number/);
    expect(errors.max_lateness_seconds).toBeUndefined();
  });
});

describe('the edit-conflict comparison', () => {
  it('is by content: the same alerts with their keys in another order are no difference', async () => {
    const { conflictingFields } = await import('./ConflictDialog');
    const theirs = { name: 'flaky-etl', description: 'theirs', alerts: { on_failure: false, consecutive_failures: null, max_lateness_seconds: null } };
    const mine = { name: 'flaky-etl', description: 'mine', alerts: { max_lateness_seconds: null, consecutive_failures: null, on_failure: false } };
    expect(conflictingFields(mine as never, theirs as never)).toEqual([{ field: 'description', mine: 'mine', theirs: 'theirs' }]);
  });
});
