import { useCallback } from 'react';
import { useSearchParams } from 'react-router';

/** The paging parameters of a list: the page's cursor and the cursors of the pages before it
 * (page 1 has none), so Previous works after a reload or from a shared link. */
export const PAGING_PARAMS = ['cursor', 'back'] as const;

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
          if (!('cursor' in changes)) PAGING_PARAMS.forEach((p) => next.delete(p));
          return next;
        },
        { replace: true },
      );
    },
    [setParams],
  );
  return { params, set };
}

export interface Paging {
  cursor: string | null;
  /** The cursors of pages 2 … current − 1 (page 1 is the list without a cursor). */
  trail: string[];
  go: (cursor: string | null, trail: string[]) => void;
}

/**
 * A list's place in its pages, kept in the URL (`?cursor=c3&back=c2`): the API pages forward only
 * (keyset), so the way back is the trail of cursors followed, and it has to survive a reload.
 * `prefix` keeps a second pager on one page apart (`runs_cursor`, `runs_back`).
 */
export function useUrlPaging(prefix = ''): Paging {
  const [params, setParams] = useSearchParams();
  const [cursorKey, backKey] = PAGING_PARAMS.map((p) => `${prefix}${p}`) as [string, string];
  const cursor = params.get(cursorKey) || null;
  const trail = cursor ? params.getAll(backKey).filter(Boolean) : [];
  const go = useCallback(
    (target: string | null, before: string[]) => {
      setParams(
        (prev) => {
          const next = new URLSearchParams(prev);
          next.delete(cursorKey);
          next.delete(backKey);
          if (target) {
            next.set(cursorKey, target);
            before.forEach((c) => next.append(backKey, c));
          }
          return next;
        },
        { replace: true },
      );
    },
    [setParams, cursorKey, backKey],
  );
  return { cursor, trail, go };
}
