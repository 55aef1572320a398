// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { checkCron } from '../../lib/cron-syntax';
import { EVERY_CHOICES, expressionOf, formatDays, patternOf, type Pattern } from './patterns';

const samples: Pattern[] = [
  ...EVERY_CHOICES.seconds.map((every) => ({ kind: 'seconds', every }) as const),
  ...EVERY_CHOICES.minutes.map((every) => ({ kind: 'minutes', every }) as const),
  ...EVERY_CHOICES.hours.map((every) => ({ kind: 'hours', every }) as const),
  { kind: 'daily', hour: 0, minute: 0 },
  { kind: 'daily', hour: 23, minute: 59 },
  { kind: 'weekly', days: [1, 2, 3, 4, 5], hour: 9, minute: 30 },
  { kind: 'weekly', days: [0, 6], hour: 8, minute: 0 },
  { kind: 'weekly', days: [1, 3, 5], hour: 12, minute: 15 },
  { kind: 'weekly', days: [0, 1, 2, 4], hour: 7, minute: 5 },
  { kind: 'weekly', days: [0, 1, 2, 3, 4, 5, 6], hour: 6, minute: 0 },
  { kind: 'monthly', day: 1, hour: 9, minute: 0 },
  { kind: 'monthly', day: 31, hour: 18, minute: 45 },
  { kind: 'monthly', day: 'L', hour: 23, minute: 0 },
  { kind: 'yearly', month: 1, day: 1, hour: 0, minute: 0 },
  { kind: 'yearly', month: 2, day: 29, hour: 12, minute: 0 },
  { kind: 'yearly', month: 12, day: 31, hour: 23, minute: 59 },
];

describe('cron builder patterns', () => {
  it.each(samples.map((p) => [JSON.stringify(p), p] as const))('round-trips %s (dropdowns → expression → dropdowns)', (_n, p) => {
    const expression = expressionOf(p);
    expect(expression).not.toBeNull();
    const check = checkCron(expression ?? '');
    expect(check.valid, `${expression} passes the pre-check`).toBe(true);
    expect(patternOf(expression ?? '')).toEqual(p);
  });

  it('builds weekdays at 09:30 as 0 30 9 * * MON-FRI', () => {
    expect(expressionOf({ kind: 'weekly', days: [1, 2, 3, 4, 5], hour: 9, minute: 30 })).toBe('0 30 9 * * MON-FRI');
  });

  it('reads typed expressions into the pattern they express', () => {
    expect(patternOf('0 30 9 * * 1-5')).toEqual({ kind: 'weekly', days: [1, 2, 3, 4, 5], hour: 9, minute: 30 });
    expect(patternOf('30 9 * * mon-fri')).toEqual({ kind: 'weekly', days: [1, 2, 3, 4, 5], hour: 9, minute: 30 });
    expect(patternOf('0 0 12 * * 7')).toEqual({ kind: 'weekly', days: [0], hour: 12, minute: 0 });
    expect(patternOf('*/5 * * * *')).toEqual({ kind: 'minutes', every: 5 });
    expect(patternOf('0 0 18 L * *')).toEqual({ kind: 'monthly', day: 'L', hour: 18, minute: 0 });
    expect(patternOf('0 0 0 1 JAN *')).toEqual({ kind: 'yearly', month: 1, day: 1, hour: 0, minute: 0 });
  });

  it.each(['0 0 9-17 * * *', '10,20,30 * * * * *', '0 0 0 1-7 * MON', '*/7 * * * * *', '15 30 9 * * *', '0 0 0 1 */3 *', 'nonsense'])(
    'shows Custom for %j, which no pattern expresses',
    (e) => expect(patternOf(e)).toEqual({ kind: 'custom' }),
  );

  it('folds consecutive weekdays into ranges', () => {
    expect(formatDays([1, 2, 3])).toBe('MON-WED');
    expect(formatDays([1, 2])).toBe('MON,TUE');
    expect(formatDays([0, 2, 3, 4, 6])).toBe('SUN,TUE-THU,SAT');
  });
});
