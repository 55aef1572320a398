/** `<input type="datetime-local">` values are in the browser's zone without an offset; the API wants an instant. */
export function localInputToIso(value: string): string | null {
  if (!value) return null;
  const when = new Date(value);
  return Number.isNaN(when.getTime()) ? null : when.toISOString();
}

/** An instant as a `datetime-local` value in the browser's zone (to the minute). */
export function isoToLocalInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
