import { DEFAULT_THEME, type MantineColorsTuple, type MantineThemeColors } from '@mantine/core';
import { darkenUntil } from '../lib/contrast';

// What Mantine draws with each shade in the light scheme (MantineCssVariables): shade 8 (the
// primary shade set in providers.tsx) is the filled background under white text and the colour of
// `c="green"` text on white and zebra rows; shade 9 is the light variant's text on shades 1/2.
// The stock shades give 2.7–3.6:1 there for green, orange, yellow, red and others. 4.6 keeps a
// margin over AA's 4.5 for rounding in browsers.
const AA = 4.6;
const WHITE = '#ffffff';
const ZEBRA = DEFAULT_THEME.colors.gray[0];

export function accessibleShades(shades: MantineColorsTuple): MantineColorsTuple {
  const filled = darkenUntil(shades[8], [WHITE, ZEBRA], AA);
  const onTint = darkenUntil(shades[9], [shades[1], shades[2], WHITE], AA);
  return [...shades.slice(0, 8), filled, onTint] as unknown as MantineColorsTuple;
}

/** Every chromatic palette with AA shades 8 and 9; `dark` and `gray` are surfaces and already pass. */
export const accessibleColors: MantineThemeColors = Object.fromEntries(
  Object.entries(DEFAULT_THEME.colors).map(([name, shades]) => [
    name,
    name === 'dark' || name === 'gray' ? shades : accessibleShades(shades),
  ]),
) as MantineThemeColors;
