import { useEffect, useRef } from 'react';
import { useLocation, useNavigationType } from 'react-router';

/** A new page opens at its top: React Router keeps the window's scroll across routes, so after
 * Save the schedule's page opened at the form's scroll offset (review 2.10). Back and Forward
 * (POP) keep the browser's own restoration, and a change of the query string alone (a filter,
 * a page of results) keeps the place — the pager scrolls up itself. */
export function useScrollToTopOnNewPage() {
  const { pathname } = useLocation();
  const navigation = useNavigationType();
  const shown = useRef(pathname);
  useEffect(() => {
    if (shown.current === pathname) return;
    shown.current = pathname;
    if (navigation !== 'POP') window.scrollTo({ top: 0 });
  }, [pathname, navigation]);
}
