import { localValueOf } from '../../lib/time';

/** Local date-time values (`LocalDateTimeInput`) are in the browser's zone without an offset; the API wants an instant. */
export function localInputToIso(value: string): string | null {
  if (!value) return null;
  const when = new Date(value);
  return Number.isNaN(when.getTime()) ? null : when.toISOString();
}

/** An instant as a local date-time value in the browser's zone (to the second). */
export function isoToLocalInput(date: Date): string {
  return localValueOf(date);
}
