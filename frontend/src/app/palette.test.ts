import { DEFAULT_THEME, type MantineColorsTuple } from '@mantine/core';
import { contrastRatio } from '../lib/contrast';
import { accessibleColors } from './palette';

describe('accessible palettes', () => {
  it('the stock palettes fail AA where the console draws text (why this exists)', () => {
    expect(contrastRatio(DEFAULT_THEME.colors.green[8], '#ffffff')).toBeLessThan(4.5);
    expect(contrastRatio(DEFAULT_THEME.colors.yellow[9], DEFAULT_THEME.colors.yellow[1])).toBeLessThan(4.5);
  });

  it.each(Object.entries(accessibleColors))('%s: filled, text and light-variant shades reach 4.5:1', (name, shades: MantineColorsTuple) => {
    expect(contrastRatio(shades[8], '#ffffff')).toBeGreaterThanOrEqual(4.5);
    expect(contrastRatio(shades[8], DEFAULT_THEME.colors.gray[0])).toBeGreaterThanOrEqual(4.5);
    expect(contrastRatio(shades[9], shades[1])).toBeGreaterThanOrEqual(4.5);
    expect(contrastRatio(shades[9], shades[2])).toBeGreaterThanOrEqual(4.5);
    // The light shades (tints, dark-scheme text) stay Mantine's.
    expect(shades.slice(0, 8)).toEqual(DEFAULT_THEME.colors[name]?.slice(0, 8));
  });
});
