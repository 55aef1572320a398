import { useEffect, useState, type ComponentType } from 'react';

/**
 * A component whose code is fetched once the page around it has rendered: `useComponent()` is
 * undefined on that first render (the caller shows a stand-in) and the component from then on.
 * Unlike React.lazy, nothing is requested while React renders, so the first render (the one a
 * slow phone waits for) does not also build the import's preload links (bench/RESULTS.md,
 * issue 23). Loaded once for the whole console; a failed download is retried on the next mount.
 */
export function deferredComponent<P>(load: () => Promise<ComponentType<P>>) {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<ComponentType<P>> | undefined;
  const preload = () => {
    loading ??= load().then(
      (component) => (loaded = component),
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    );
    return loading;
  };
  function useComponent(): ComponentType<P> | undefined {
    const [component, setComponent] = useState(() => loaded);
    useEffect(() => {
      if (component) return undefined;
      let live = true;
      preload().then(
        (c) => live && setComponent(() => c),
        () => {}, // offline: the stand-in stays; the next mount asks again
      );
      return () => {
        live = false;
      };
    }, [component]);
    return component;
  }
  return { preload, useComponent };
}
