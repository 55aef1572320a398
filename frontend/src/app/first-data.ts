import type { QueryClient } from '@tanstack/react-query';
import { meQueryKey } from '../api/queries/get-me';
import type { Me, Stats } from '../api/types';
import { statsQueryOptions } from '../features/dashboard/api/get-stats';
import { initialProject } from '../lib/project-scope';

/** The element `cronplane serve` (backend api/spa.py) puts into index.html for a signed-in
 * navigation: the answers of the console's first requests, so the first render needs none. */
export const FIRST_DATA_ID = 'cp-first-data';

export interface FirstData {
  /** GET /auth/me's answer. */
  me: Me;
  /** GET /stats's answer, for the project in the page's URL (null: every project the caller reads). */
  stats?: { project: string | null; body: Stats };
}

function isFirstData(value: unknown): value is FirstData {
  if (!value || typeof value !== 'object') return false;
  const { me, stats } = value as Record<string, unknown>;
  if (!me || typeof me !== 'object' || typeof (me as Record<string, unknown>).id !== 'number') return false;
  if (stats === undefined) return true;
  return !!stats && typeof stats === 'object' && 'body' in stats && 'project' in stats;
}

/**
 * The answers index.html carries, read once and taken out of the document: a later read (another
 * module, a test, a second call) finds nothing and asks the API, so nothing here outlives its first
 * frame. null when the page has none (signed out, the answers could not be made, or the console is
 * served by something other than `cronplane serve`), or they do not parse.
 */
export function takeFirstData(doc: Document = document): FirstData | null {
  const element = doc.getElementById(FIRST_DATA_ID);
  if (!element) return null;
  element.remove();
  try {
    const value: unknown = JSON.parse(element.textContent ?? '');
    return isFirstData(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Puts the answers into the cache as if the queries had fetched them now: who is signed in, and the
 * dashboard's numbers when this page is the dashboard in the same project they were counted for
 * (the URL's, else the one remembered on this browser, which the server cannot see). Everything
 * after polls as before (each query's own staleTime and refetchInterval).
 */
export function seedFirstData(client: QueryClient, data: FirstData, where: Pick<Location, 'pathname' | 'search'>): void {
  client.setQueryData(meQueryKey, data.me);
  const stats = data.stats;
  if (stats && where.pathname === '/' && initialProject(data.me.id, where.search) === stats.project) {
    client.setQueryData(statsQueryOptions(false).queryKey, stats.body);
  }
}
