// Loaded by DeferredTooltip.tsx on its own: Mantine's Tooltip brings floating-ui.
export { Tooltip } from '@mantine/core';
