import type { Attempt } from '../../api/types';

/** The glyph drawn inside an attempt's timeline marker: the outcome by shape as well as colour
 * (never colour alone, review 2026-12-05 §5.14), next to the badge that names it. */
export type AttemptGlyph = 'check' | 'cross' | 'clock' | 'dash' | 'bang' | 'pause' | 'dot';

export const ATTEMPT_MARKERS: Record<string, { color: string; glyph: AttemptGlyph }> = {
  SUCCEEDED: { color: 'green.8', glyph: 'check' },
  FAILED: { color: 'red.8', glyph: 'cross' },
  TIMED_OUT: { color: 'orange.9', glyph: 'clock' },
  CANCELLED: { color: 'gray.7', glyph: 'dash' },
  LOST: { color: 'grape.8', glyph: 'bang' },
  INTERRUPTED: { color: 'cyan.9', glyph: 'pause' },
  RUNNING: { color: 'blue.7', glyph: 'dot' },
};

export function attemptMarker(status: string): { color: string; glyph: AttemptGlyph } {
  return ATTEMPT_MARKERS[status] ?? { color: 'gray.7', glyph: 'dot' };
}

/** How an attempt's error relates to the others': the first of a run of identical errors is shown
 * once with how many attempts had it ("× 4 attempts"); the later ones only point back to it. */
export type ErrorShown = { kind: 'none' } | { kind: 'first'; count: number; numbers: number[] } | { kind: 'repeat'; of: number };

const sameText = (error: string) => error.trim();

export function errorRepeats(attempts: readonly Attempt[]): Map<number, ErrorShown> {
  const byText = new Map<string, number[]>();
  for (const a of attempts) {
    if (!a.error) continue;
    const key = sameText(a.error);
    byText.set(key, [...(byText.get(key) ?? []), a.number]);
  }
  const shown = new Map<number, ErrorShown>();
  for (const a of attempts) {
    const numbers = a.error ? byText.get(sameText(a.error)) : undefined;
    if (!numbers) shown.set(a.number, { kind: 'none' });
    else if (numbers[0] === a.number) shown.set(a.number, { kind: 'first', count: numbers.length, numbers });
    else shown.set(a.number, { kind: 'repeat', of: numbers[0] as number });
  }
  return shown;
}

/** "× 4 attempts", or "× 2 attempts (1 and 3)" when the run is not every attempt in a row. */
export function repeatText(numbers: readonly number[]): string {
  const contiguous = numbers.every((n, i) => i === 0 || n === (numbers[i - 1] as number) + 1);
  const which = contiguous ? `${numbers[0]}–${numbers.at(-1)}` : `${numbers.slice(0, -1).join(', ')} and ${numbers.at(-1)}`;
  return `× ${numbers.length} attempts (${which})`;
}
