/** recharts' hover tooltip in the scheme's own colours: by default it writes each series' name in
 * its bar's colour on white (#fab005 is 1.9:1, #228be6 3.6:1; axe's color-contrast) and stays
 * white in dark. */
export const TOOLTIP_BOX = { backgroundColor: 'var(--mantine-color-body)', borderColor: 'var(--mantine-color-default-border)' };
export const TOOLTIP_ITEM = { color: 'var(--mantine-color-text)' };
