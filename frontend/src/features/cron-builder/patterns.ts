/**
 * The repeat patterns the dropdowns offer, and the two directions between a pattern and a 6-field
 * expression. Every pattern maps to exactly one expression, and `patternOf(expressionOf(p))` gives `p`
 * back; an expression no pattern produces is "custom".
 */
import { checkCron, DAY_NAMES, MONTH_NAMES } from '../../lib/cron-syntax';

export type Pattern =
  | { kind: 'seconds'; every: number }
  | { kind: 'minutes'; every: number }
  | { kind: 'hours'; every: number }
  | { kind: 'daily'; hour: number; minute: number }
  | { kind: 'weekly'; days: number[]; hour: number; minute: number }
  | { kind: 'monthly'; day: number | 'L'; hour: number; minute: number }
  | { kind: 'yearly'; month: number; day: number; hour: number; minute: number }
  | { kind: 'custom' };

export type PatternKind = Pattern['kind'];

export const PATTERN_LABELS: Record<PatternKind, string> = {
  seconds: 'Every N seconds',
  minutes: 'Every N minutes',
  hours: 'Every N hours',
  daily: 'Daily at a time',
  weekly: 'Weekly on chosen days',
  monthly: 'Monthly on a day',
  yearly: 'Yearly on a date',
  custom: 'Custom',
};

/** Interval choices that divide their unit evenly, so "every N" really is every N (no short gap at the wrap). */
export const EVERY_CHOICES: Record<'seconds' | 'minutes' | 'hours', number[]> = {
  seconds: [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30],
  minutes: [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30],
  hours: [1, 2, 3, 4, 6, 8, 12],
};

export function defaultPattern(kind: PatternKind): Pattern {
  switch (kind) {
    case 'seconds':
      return { kind, every: 30 };
    case 'minutes':
      return { kind, every: 5 };
    case 'hours':
      return { kind, every: 1 };
    case 'daily':
      return { kind, hour: 9, minute: 0 };
    case 'weekly':
      return { kind, days: [1, 2, 3, 4, 5], hour: 9, minute: 0 };
    case 'monthly':
      return { kind, day: 1, hour: 9, minute: 0 };
    case 'yearly':
      return { kind, month: 1, day: 1, hour: 9, minute: 0 };
    case 'custom':
      return { kind };
  }
}

const every = (n: number) => (n === 1 ? '*' : `*/${n}`);

/** Weekdays as names, consecutive runs of 3+ folded into a range: [1..5] → MON-FRI, [0,6] → SUN,SAT. */
export function formatDays(days: number[]): string {
  const sorted = [...new Set(days)].sort((a, b) => a - b);
  const parts: string[] = [];
  let i = 0;
  while (i < sorted.length) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] ?? 0) + 1) j++;
    const a = sorted[i] ?? 0;
    const b = sorted[j] ?? 0;
    if (j - i >= 2) parts.push(`${DAY_NAMES[a]}-${DAY_NAMES[b]}`);
    else for (let k = i; k <= j; k++) parts.push(DAY_NAMES[sorted[k] ?? 0] ?? '');
    i = j + 1;
  }
  return parts.join(',');
}

export function expressionOf(p: Pattern): string | null {
  switch (p.kind) {
    case 'seconds':
      return `${every(p.every)} * * * * *`;
    case 'minutes':
      return `0 ${every(p.every)} * * * *`;
    case 'hours':
      return `0 0 ${every(p.every)} * * *`;
    case 'daily':
      return `0 ${p.minute} ${p.hour} * * *`;
    case 'weekly':
      return p.days.length === 0 ? null : `0 ${p.minute} ${p.hour} * * ${formatDays(p.days)}`;
    case 'monthly':
      return `0 ${p.minute} ${p.hour} ${p.day} * *`;
    case 'yearly':
      return `0 ${p.minute} ${p.hour} ${p.day} ${MONTH_NAMES[p.month - 1]} *`;
    case 'custom':
      return null;
  }
}

const INT = /^\d{1,2}$/;

function intervalOf(token: string, choices: number[]): number | null {
  if (token === '*') return 1;
  const m = /^\*\/(\d{1,2})$/.exec(token);
  const n = m ? Number(m[1]) : NaN;
  return choices.includes(n) ? n : null;
}

function valueOf(token: string, names: readonly string[], offset: number): number | null {
  if (INT.test(token)) return Number(token);
  const i = names.indexOf(token);
  return i >= 0 ? i + offset : null;
}

function daysOf(token: string): number[] | null {
  const days = new Set<number>();
  for (const item of token.split(',')) {
    const [a, b, ...rest] = item.split('-');
    if (rest.length || a === undefined) return null;
    const lo = valueOf(a, DAY_NAMES, 0);
    const hi = b === undefined ? lo : valueOf(b, DAY_NAMES, 0);
    if (lo === null || hi === null || lo > hi) return null;
    for (let d = lo; d <= hi; d++) days.add(d % 7);
  }
  return [...days].sort((x, y) => x - y);
}

/** The pattern an expression expresses, or custom. Invalid expressions are custom too. */
export function patternOf(expression: string): Pattern {
  const check = checkCron(expression);
  if (!check.valid) return { kind: 'custom' };
  const [s, mi, h, dom, mon, dow] = check.fields as [string, string, string, string, string, string];
  const allStar = (...t: string[]) => t.every((x) => x === '*');

  if (allStar(mi, h, dom, mon, dow)) {
    const n = intervalOf(s, EVERY_CHOICES.seconds);
    if (n !== null) return { kind: 'seconds', every: n };
  }
  if (s === '0' && allStar(h, dom, mon, dow)) {
    const n = intervalOf(mi, EVERY_CHOICES.minutes);
    if (n !== null) return { kind: 'minutes', every: n };
  }
  if (s === '0' && mi === '0' && allStar(dom, mon, dow)) {
    const n = intervalOf(h, EVERY_CHOICES.hours);
    if (n !== null) return { kind: 'hours', every: n };
  }
  if (s !== '0' || !INT.test(mi) || !INT.test(h)) return { kind: 'custom' };
  const time = { hour: Number(h), minute: Number(mi) };

  if (allStar(dom, mon, dow)) return { kind: 'daily', ...time };
  if (allStar(dom, mon)) {
    const days = daysOf(dow);
    return days ? { kind: 'weekly', days, ...time } : { kind: 'custom' };
  }
  if (dow !== '*') return { kind: 'custom' };
  if (mon === '*' && (dom === 'L' || INT.test(dom))) {
    return { kind: 'monthly', day: dom === 'L' ? 'L' : Number(dom), ...time };
  }
  const month = valueOf(mon, MONTH_NAMES, 1);
  if (month !== null && INT.test(dom)) return { kind: 'yearly', month, day: Number(dom), ...time };
  return { kind: 'custom' };
}
