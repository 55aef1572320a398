import { describe, expect, it } from 'vitest';
import { formatAt, formatExact, formatMinute } from './time';

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
