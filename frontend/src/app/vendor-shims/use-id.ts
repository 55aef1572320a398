// Stands in for @mantine/hooks' useId (see lighterVendorImports in vite.config.ts). Mantine's own
// starts from React's id and swaps in a random one from a layout effect: a state update during
// the commit, so every page's first render (the AppShell, each NavLink, an Alert) was rendered
// twice, synchronously, and React ran all the effects of the first render before the browser could
// paint it (fetches, lazy imports, storage; bench/RESULTS.md, issue 45). React's id is unique in
// the console's one root and stable from the first render, so the swap is only a cost here.
import { useId as useReactId } from 'react';

export function useId(staticId?: string): string {
  const reactId = useReactId();
  return typeof staticId === 'string' ? staticId : `mantine-${reactId.replace(/[^\w-]/g, '')}`;
}
