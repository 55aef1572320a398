import { describe, expect, it } from 'vitest';
import { formatAt, formatCompactRelative, formatExact, formatLag, formatMinute, fromLocalInput, parseLocalDateTime, showLocalDateTime, toLocalInput } from './time';

// The test process runs in UTC (as the e2e browser does), so the viewer's zone is UTC here.
describe('one absolute time format', () => {
  it('writes an instant 24 h in the given zone, the zone named, the same way in every zone', () => {
    expect(formatAt('2026-12-02T14:08:00Z', 'UTC')).toBe('2026-12-02 14:08:00 UTC');
    expect(formatAt('2026-12-02T14:08:00Z', 'Europe/Berlin')).toBe('2026-12-02 15:08:00 Europe/Berlin');
    expect(formatAt('2026-12-02T23:30:00Z', 'America/New_York')).toBe('2026-12-02 18:30:00 America/New_York');
    expect(formatAt('not a time', 'UTC')).toBe('not a time');
  });

  it('the exact time of a viewer in UTC is the same text as a list writes it', () => {
    expect(formatExact('2026-12-02T14:08:00Z')).toBe(formatAt('2026-12-02T14:08:00Z', 'UTC'));
  });

  it("a chart's minute is 24 h, not the locale's 02:10 PM", () => {
    expect(formatMinute('2026-12-02T14:10:00Z')).toBe('14:10');
    expect(formatMinute('2026-12-02T00:05:00Z')).toBe('00:05');
  });
});

describe('compact relative times for one-line rows', () => {
  const now = Date.parse('2026-12-05T08:42:17Z');
  it('writes whole units, past and future, never more than a few characters', () => {
    expect(formatCompactRelative('2026-12-05T08:42:14Z', now)).toBe('3 s ago');
    expect(formatCompactRelative('2026-12-05T08:42:17.400Z', now)).toBe('now');
    expect(formatCompactRelative('2026-12-05T08:30:00Z', now)).toBe('12 min ago');
    expect(formatCompactRelative('2026-12-05T06:00:00Z', now)).toBe('2 h ago');
    expect(formatCompactRelative('2026-12-01T08:00:00Z', now)).toBe('4 d ago');
    expect(formatCompactRelative('2026-12-05T08:42:47Z', now)).toBe('in 30 s');
    expect(formatCompactRelative('2026-12-05T09:45:00Z', now)).toBe('in 1 h');
    expect(formatCompactRelative('nope', now)).toBe('nope');
  });

  it('writes a lateness in seconds with a decimal (18326 ms is 18.3 s, not "18326 ms")', () => {
    expect(formatLag(18326)).toBe('18.3 s');
    expect(formatLag(40)).toBe('0.0 s');
    expect(formatLag(125_000)).toBe('2 min 5.0 s');
  });
});

describe('typed local date-times (24 h, seconds)', () => {
  it('takes a date and a 24-hour time, seconds optional, and gives the value to the second', () => {
    expect(parseLocalDateTime('2026-03-29 14:05')).toBe('2026-03-29T14:05:00');
    expect(parseLocalDateTime(' 2026-03-29 14:05:07 ')).toBe('2026-03-29T14:05:07');
    expect(parseLocalDateTime('2026-03-29T00:00')).toBe('2026-03-29T00:00:00');
    expect(parseLocalDateTime('')).toBe('');
  });

  it('refuses 12-hour times, hours past 23 and days a month does not have', () => {
    for (const text of ['2026-03-29 2:05 PM', '03/29/2026 14:05', '2026-03-29 24:00', '2026-02-30 10:00', '2026-03-29 14:60', '2026-03-29']) {
      expect(parseLocalDateTime(text), text).toBeNull();
    }
  });

  it('shows a value as the console writes times, and round-trips an instant to the second', () => {
    expect(showLocalDateTime('2026-03-29T14:05')).toBe('2026-03-29 14:05:00');
    expect(showLocalDateTime('2026-03-29T14:05:07')).toBe('2026-03-29 14:05:07');
    expect(toLocalInput('2026-03-29T14:05:07Z')).toBe('2026-03-29T14:05:07');
    expect(fromLocalInput(toLocalInput('2026-03-29T14:05:07Z'))).toBe('2026-03-29T14:05:07Z');
  });
});
