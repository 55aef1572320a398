import { describe, expect, it } from 'vitest';
import type { Attempt } from '../../api/types';
import { attemptMarker, errorRepeats, repeatText } from './attempt-outcome';

const a = (number: number, status: string, error: string | null): Attempt => ({ number, status, error }) as unknown as Attempt;

describe('attempt outcome', () => {
  it('marks each outcome by colour and by shape, failures never in the colour of success', () => {
    expect(attemptMarker('SUCCEEDED')).toEqual({ color: 'green.8', glyph: 'check' });
    expect(attemptMarker('FAILED')).toEqual({ color: 'red.8', glyph: 'cross' });
    expect(attemptMarker('TIMED_OUT').glyph).toBe('clock');
    const glyphs = ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'CANCELLED', 'LOST', 'INTERRUPTED', 'RUNNING'].map((s) => attemptMarker(s).glyph);
    expect(new Set(glyphs).size).toBe(glyphs.length);
  });

  it('shows a repeated error once, with how many attempts had it', () => {
    const boom = 'HandlerFailed: ConnectionResetError\nTraceback …';
    const shown = errorRepeats([a(1, 'FAILED', boom), a(2, 'FAILED', `${boom}\n`), a(3, 'FAILED', boom), a(4, 'FAILED', boom)]);
    expect(shown.get(1)).toEqual({ kind: 'first', count: 4, numbers: [1, 2, 3, 4] });
    expect(shown.get(2)).toEqual({ kind: 'repeat', of: 1 });
    expect(shown.get(4)).toEqual({ kind: 'repeat', of: 1 });
    expect(repeatText([1, 2, 3, 4])).toBe('× 4 attempts (1–4)');
  });

  it('keeps different errors apart, and attempts without one out', () => {
    const shown = errorRepeats([a(1, 'FAILED', 'disk full'), a(2, 'LOST', null), a(3, 'FAILED', 'timeout'), a(4, 'FAILED', 'disk full')]);
    expect(shown.get(1)).toEqual({ kind: 'first', count: 2, numbers: [1, 4] });
    expect(shown.get(2)).toEqual({ kind: 'none' });
    expect(shown.get(3)).toEqual({ kind: 'first', count: 1, numbers: [3] });
    expect(shown.get(4)).toEqual({ kind: 'repeat', of: 1 });
    expect(repeatText([1, 4])).toBe('× 2 attempts (1 and 4)');
    expect(repeatText([1, 3, 5])).toBe('× 3 attempts (1, 3 and 5)');
  });
});
