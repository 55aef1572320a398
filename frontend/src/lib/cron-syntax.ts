/**
 * Client-side pre-check of the cron subset the scheduler honours (6 fields, seconds first; 5 fields get
 * `0` prepended). It exists only for instant feedback while typing: the backend's `/cron/describe` stays
 * the source of truth, and fixtures/cron/cases.json keeps the two in agreement.
 */

export interface CronFieldSpec {
  index: number; // 1-based, as error messages name it
  name: string;
  min: number;
  max: number;
  names?: readonly string[]; // names[i] is the value min + i
}

const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;
const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;

export const CRON_FIELDS: readonly CronFieldSpec[] = [
  { index: 1, name: 'second', min: 0, max: 59 },
  { index: 2, name: 'minute', min: 0, max: 59 },
  { index: 3, name: 'hour', min: 0, max: 23 },
  { index: 4, name: 'day of month', min: 1, max: 31 },
  { index: 5, name: 'month', min: 1, max: 12, names: MONTH_NAMES },
  { index: 6, name: 'day of week', min: 0, max: 7, names: DAY_NAMES },
];

export const MAX_EXPRESSION_LENGTH = 200;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]; // February can have 29

export type CronCheck =
  | { valid: true; canonical: string; fields: string[] }
  | { valid: false; field: number | null; message: string };

class FieldError extends Error {}

function parseValue(token: string, spec: CronFieldSpec): number {
  if (/^\d+$/.test(token)) {
    // Long digit strings are rejected before conversion so huge numbers never become huge loops.
    const value = token.length > 3 ? Infinity : Number(token);
    if (value < spec.min || value > spec.max) {
      throw new FieldError(`${token.length > 6 ? token.slice(0, 6) + '…' : token} is out of range ${spec.min}–${spec.max}`);
    }
    return value;
  }
  const idx = spec.names?.indexOf(token as never) ?? -1;
  if (idx >= 0) return idx + spec.min;
  if (token === '') throw new FieldError('a value is missing');
  throw new FieldError(`"${token}" is not a number${spec.names ? ' or a three-letter name' : ''}`);
}

/** Quartz tokens people type because the console uses Quartz's field order: named as such (the
 * same words as the server's cron_parse), never as "not a number". */
function unsupportedQuartz(item: string, spec: CronFieldSpec) {
  if (item.includes('?')) throw new FieldError("'?' is not supported; use '*'");
  if (item.includes('#')) throw new FieldError("'#' (nth weekday of the month) is not supported");
  for (const word of item.match(/[A-Z0-9]+/g) ?? []) {
    if (/^\d+$/.test(word) || spec.names?.includes(word)) continue;
    if (word.includes('L')) throw new FieldError("'L' is only supported alone in day of month");
    if (word.includes('W')) throw new FieldError("'W' (nearest weekday) is not supported");
  }
}

/** Returns the set of values a field selects (small: at most 60 entries). */
function parseField(raw: string, spec: CronFieldSpec): Set<number> {
  const values = new Set<number>();
  if (raw === 'L') {
    if (spec.index !== 4) throw new FieldError('L is only supported in day of month');
    values.add(-1);
    return values;
  }
  for (const item of raw.split(',')) {
    if (item === '') throw new FieldError('empty list item');
    unsupportedQuartz(item, spec);
    const parts = item.split('/');
    if (parts.length > 2) throw new FieldError(`"${item}" has more than one step`);
    const [rangePart = '', stepPart] = parts;
    let step = 1;
    if (stepPart !== undefined) {
      if (!/^\d+$/.test(stepPart)) throw new FieldError(`step "${stepPart}" is not a number`);
      step = stepPart.length > 3 ? Infinity : Number(stepPart);
      if (step === 0) throw new FieldError('step 0 is not allowed');
      if (step > spec.max - spec.min + 1 && step > spec.max) {
        throw new FieldError(`step ${stepPart.length > 6 ? stepPart.slice(0, 6) + '…' : stepPart} is out of range 1–${spec.max}`);
      }
    }
    let lo: number;
    let hi: number;
    if (rangePart === '*') {
      lo = spec.min;
      hi = spec.max;
    } else if (rangePart.includes('-')) {
      const bounds = rangePart.split('-');
      if (bounds.length !== 2) throw new FieldError(`"${rangePart}" is not a range`);
      lo = parseValue(bounds[0] ?? '', spec);
      hi = parseValue(bounds[1] ?? '', spec);
      if (lo > hi) throw new FieldError(`range ${rangePart} is reversed`);
    } else {
      lo = parseValue(rangePart, spec);
      hi = stepPart !== undefined ? spec.max : lo;
    }
    for (let v = lo; v <= hi; v += step) values.add(v);
  }
  return values;
}

export function checkCron(expression: string): CronCheck {
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    return { valid: false, field: null, message: `expression is longer than ${MAX_EXPRESSION_LENGTH} characters` };
  }
  let fields = expression.trim().toUpperCase().split(/\s+/).filter(Boolean);
  if (fields.length === 5) fields = ['0', ...fields];
  if (fields.length !== 6) {
    return {
      valid: false,
      field: null,
      message: `expected 6 fields (second minute hour day-of-month month day-of-week) or 5, got ${fields.length}`,
    };
  }
  const sets: Set<number>[] = [];
  for (const [i, spec] of CRON_FIELDS.entries()) {
    try {
      sets.push(parseField(fields[i] ?? '', spec));
    } catch (e) {
      if (!(e instanceof FieldError)) throw e;
      return { valid: false, field: spec.index, message: `field ${spec.index} (${spec.name}): ${e.message}` };
    }
  }
  const [, , , dom, months] = sets;
  // With day of week unrestricted only day of month decides; a day no chosen month has never fires.
  if (fields[5] === '*' && dom && months && !dom.has(-1)) {
    const longest = Math.max(...[...months].map((m) => DAYS_IN_MONTH[m - 1] ?? 31));
    if (Math.min(...dom) > longest) {
      return { valid: false, field: null, message: 'this expression never fires (no chosen month has that day)' };
    }
  }
  return { valid: true, canonical: fields.join(' '), fields };
}

export { DAY_NAMES, MONTH_NAMES };
