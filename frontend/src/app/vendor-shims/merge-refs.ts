// Stands in for @floating-ui/react where Mantine's ScrollArea imports it only for useMergeRefs
// (see lighterVendorImports in vite.config.ts). The dashboard's Tables carry Table.ScrollContainer,
// hence ScrollArea, into the entry; through that one import the whole of floating-ui (~20 KB
// brotli) was downloaded before the first paint although only menus, selects and tooltips use it.
import { useMergedRef } from '@mantine/hooks';
import type { Ref } from 'react';

export function useMergeRefs<T>(refs: Array<Ref<T> | undefined>) {
  return useMergedRef<T>(...refs);
}
