import './boot-mark';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { meQueryKey, meQueryOptions } from './api/queries/get-me';
import type { SignedIn } from './api/types';
import { App } from './app/App';
import { seedFirstData, takeFirstData } from './app/first-data';
import { createQueryClient } from './app/providers';
import { statsQueryOptions } from './features/dashboard/api/get-stats';
import { everyProjectForAnyone, initialProject } from './lib/project-scope';

// Every module of the entry has run (see boot-mark.ts).
performance.mark('cp:modules-evaluated');
const client = createQueryClient();
// Without the answers in the page (signed out, or the console served by another server such as
// Caddy): who is signed in decides the first screen, and index.html has asked already (the answer is
// usually in before the scripts are): waiting for it here makes the first render the signed-in
// page (or the login page) instead of a session loader then the page, one whole render less on
// a slow phone (bench/RESULTS.md, issue 23). index.html's static shell stays up meanwhile; a
// failed request is the query's error as before (prefetchQuery never rejects).
// The dashboard's numbers are what its reader waits for (issue 45): index.html asks for GET /stats
// beside /auth/me, so on a slow network the answer is in with the scripts, and the first render
// waits for it up to STATS_GRACE_MS more (one render with the numbers instead of a loader then
// them). Only where that early request is the dashboard's own: the dashboard, every project.
const STATS_GRACE_MS = 300;
// Taken alongside GET /auth/me, not after it, when the page will be the dashboard in every
// project whoever is signed in (no project in the URL or remembered on this browser): each answer
// taken is a trip through the browser's network stack, ~50–100 ms at 4× CPU (bench/RESULTS.md,
// issue 45). From a task of its own, so /auth/me is asked first and the check's read of
// localStorage (its first access waits on the browser, ~40 ms) overlaps that trip.
function earlyRequests(): Promise<unknown> {
  const earlyStats = new Promise<{ taken?: Promise<void> }>((resolve) =>
    setTimeout(() =>
      resolve({ taken: window.location.pathname === '/' && everyProjectForAnyone(window.location.search) ? client.prefetchQuery(statsQueryOptions(false)) : undefined }),
    ),
  );
  function dashboardData(): Promise<unknown> {
    const me = client.getQueryData<SignedIn | null>(meQueryKey);
    if (!me) return earlyStats.then(({ taken }) => (taken ? undefined : dropEarlyStats()));
    if (window.location.pathname !== '/' || initialProject(me.id, window.location.search)) return Promise.resolve();
    return earlyStats.then(({ taken }) =>
      Promise.race([taken ?? client.prefetchQuery(statsQueryOptions(false)), new Promise((resolve) => setTimeout(resolve, STATS_GRACE_MS))]),
    );
  }
  return client.prefetchQuery(meQueryOptions()).then(dashboardData);
}
// Signed out, index.html's early GET /stats can only be answered 401, and the browser hands a
// preloaded answer to the first fetch of the same URL however late: the dashboard's first request
// after signing in, which then spent a refresh and a retry on it. `cronplane serve` leaves that
// preload out of a signed-out page (backend api/spa.py EARLY_STATS); a static server such as the
// Caddyfile's cannot, so the console takes the answer here and drops it. The same URL, mode and
// credentials as the preload: no request of its own (e2e/test_behind_caddy.py); none at all where
// the page has no such preload.
function dropEarlyStats(): void {
  if (!document.querySelector('link[rel="preload"][href="/api/v1/stats"]')) return;
  void fetch(`${window.location.origin}/api/v1/stats`).then(
    (answer) => answer.body?.cancel(),
    () => undefined,
  );
}
// A signed-in navigation served by `cronplane serve` carries those answers in index.html itself
// (backend api/spa.py, which then drops the preloads): the first render needs no request at all,
// neither the preloads' trips through the network stack nor the wait for them (issue 45).
const first = takeFirstData();
const ready: Promise<unknown> = first ? Promise.resolve(seedFirstData(client, first, window.location)) : earlyRequests();
void ready.then(() =>
  createRoot(document.getElementById('root') as HTMLElement).render(
    <StrictMode>
      <App client={client} />
    </StrictMode>,
  ),
);
