import { useCallback } from 'react';
import { useSearchParams } from 'react-router';

/** URL-synced filters: the address bar is the state, so a view can be shared or bookmarked. */
export function useUrlFilters() {
  const [params, setParams] = useSearchParams();
  const set = useCallback(
    (changes: Record<string, string | string[] | null | undefined>) => {
      setParams(
        (prev) => {
          const next = new URLSearchParams(prev);
          for (const [key, value] of Object.entries(changes)) {
            next.delete(key);
            if (Array.isArray(value)) value.forEach((v) => next.append(key, v));
            else if (value) next.set(key, value);
          }
          // Any filter change starts from the first page.
          if (!('cursor' in changes)) next.delete('cursor');
          return next;
        },
        { replace: true },
      );
    },
    [setParams],
  );
  return { params, set };
}
