/** Time display helpers: the API speaks RFC 3339 UTC; people read relative times and their own zones. */

// Intl objects are made on first use, not when this module loads: the first DateTimeFormat and
// RelativeTimeFormat load ICU data, ~0.6 s of the dashboard's boot at 4x CPU throttling before
// (bench console), and the dashboard shows no time until its data arrives.
let viewerZone: string | undefined;

/** The viewer's IANA zone (the browser's), 'UTC' when it has none. */
export function viewerTimeZone(): string {
  viewerZone ??= Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return viewerZone;
}

export function allTimeZones(): string[] {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return zones.includes('UTC') ? zones : ['UTC', ...zones];
}

export function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Exact UTC, as the API stores it: 2026-03-29 01:00:00 UTC. */
export function formatUtc(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** Wall-clock time in a zone with its offset: "Sun 29 Mar 2026, 03:00:00 GMT+02:00". */
export function formatInZone(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: '2-digit',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }).format(new Date(iso));
}

/** The UTC offset a zone has at an instant, e.g. "GMT+01:00". */
export function offsetAt(iso: string, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en', { timeZone, timeZoneName: 'longOffset' }).formatToParts(new Date(iso));
  return parts.find((p) => p.type === 'timeZoneName')?.value ?? '';
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];
let rtfCache: Intl.RelativeTimeFormat | undefined;
const rtf = () => (rtfCache ??= new Intl.RelativeTimeFormat('en', { numeric: 'auto' }));

/** "3 minutes ago", "in 20 seconds". */
export function formatRelative(iso: string, now: number = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') {
      return rtf().format(Math.trunc(seconds / size), unit);
    }
  }
  return '';
}

/** "12 s", "3 min 5 s" — for ages and remaining lease time. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

const SV_PARTS = {
  datetime: { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' },
  minute: { hour: '2-digit', minute: '2-digit' },
  clock: { hour: '2-digit', minute: '2-digit', second: '2-digit' },
} satisfies Record<string, Intl.DateTimeFormatOptions>;
const svFormats = new Map<string, Intl.DateTimeFormat>();

/** The 24 h, ISO-ordered ("sv-SE") formatter of a shape in a zone, made on its first use and kept:
 * lists format an instant per row on every render, and a DateTimeFormat costs far more to make
 * than to use. */
function sv(shape: keyof typeof SV_PARTS, timeZone: string): Intl.DateTimeFormat {
  const key = `${shape} ${timeZone}`;
  let format = svFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat('sv-SE', { timeZone, ...SV_PARTS[shape], hourCycle: 'h23' });
    svFormats.set(key, format);
  }
  return format;
}

/** The console's one absolute format, in a given zone, the zone named: "2026-03-29 03:00:00 Europe/Berlin"
 * ("… UTC"). Lists, the job page and the dashboard all write an instant this way (review 12e: four formats). */
export function formatAt(iso: string, timeZone: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${sv('datetime', timeZone).format(d)} ${timeZone}`;
}

/** Local wall-clock time (24 h, with the viewer's zone) and UTC: "2026-03-29 03:00:00 Europe/Berlin · 01:00:00 UTC". */
export function formatExact(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const zone = viewerTimeZone();
  if (zone === 'UTC') return formatAt(iso, zone);
  return `${formatAt(iso, zone)} · ${d.toISOString().slice(11, 19)} UTC`;
}

/** An ISO instant as a local date-time value (viewer's zone, 24 h, to the second): "2026-03-29T03:00:00",
 * the value shape of `LocalDateTimeInput` (and of a datetime-local input). */
export function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return localValueOf(d);
}

/** A Date as a local date-time value in the viewer's zone: "2026-03-29T03:00:00". */
export function localValueOf(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A local date-time value (viewer's zone) as a UTC instant; '' or invalid → null. */
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString().replace('.000Z', 'Z');
}

const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;

/** What a person typed as a date and 24-hour time ("2026-03-29 14:05", seconds optional, a "T"
 * accepted) as a local date-time value ("2026-03-29T14:05:00"); '' for nothing typed, null for
 * anything else — 2 PM, 24:00 or 30 February included. */
export function parseLocalDateTime(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  const m = LOCAL_DATE_TIME.exec(trimmed);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  if (hour > 23 || minute > 59 || second > 59) return null;
  const d = new Date(year, month - 1, day, hour, minute, second);
  // Date rolls 30 February over into March: a date that does not come back as typed does not exist.
  if (d.getFullYear() !== year || d.getMonth() !== month - 1 || d.getDate() !== day) return null;
  return localValueOf(d);
}

/** A local date-time value as the console writes it: "2026-03-29 14:05:00". */
export function showLocalDateTime(value: string): string {
  return value.replace('T', ' ').replace(/^(\S+ \d{2}:\d{2})$/, '$1:00');
}

/** A minute of the day in the viewer's zone, 24 h: "14:10" (a chart axis; not the locale's "02:10 PM"). */
export function formatMinute(iso: string): string {
  return sv('minute', viewerTimeZone()).format(new Date(iso));
}

/** A time of day in the viewer's zone, 24 h as in formatExact: "15:07:34" (not the locale's "3:07:34 PM"). */
export function formatClock(ms: number): string {
  return sv('clock', viewerTimeZone()).format(new Date(ms));
}

const COMPACT: [string, number][] = [
  ['d', 86400],
  ['h', 3600],
  ['min', 60],
  ['s', 1],
];

/** A relative time that fits one short table cell: "3 s ago", "12 min ago", "in 2 h", "now"
 * (the full "3 seconds ago" wrapped to three lines in a jobs row, review 2026-12-05 §5.3).
 * Whole units, rounded down, as a list scanned by eye needs; the exact time is on hover. */
export function formatCompactRelative(iso: string, now: number = Date.now()): string {
  const ms = new Date(iso).getTime() - now;
  if (Number.isNaN(ms)) return iso;
  const seconds = Math.trunc(Math.abs(ms) / 1000);
  if (seconds < 1) return 'now';
  const [unit, size] = COMPACT.find(([, size]) => seconds >= size) ?? ['s', 1];
  const text = `${Math.floor(seconds / size)} ${unit}`;
  return ms < 0 ? `${text} ago` : `in ${text}`;
}

/** A lateness in seconds with one decimal: 18326 ms → "18.3 s"; past a minute "2 min 5.0 s". */
export function formatLag(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${(s - m * 60).toFixed(1)} s`;
}

/** An instant in the viewer's zone with seconds, the zone named: "2026-12-05 09:39:20 Europe/Paris". */
export function formatLocal(iso: string): string {
  return formatAt(iso, viewerTimeZone());
}
