import { ApiError } from './problem';

/** How a query asks again. A 4xx will not fix itself by asking again — except 429: the server bounds
 * each user's concurrent searches (CRONPLANE_SEARCH_CONCURRENCY) and a page with a search runs the list
 * and its count at once, so a second tab meets the bound; the slot frees within a search's time
 * (Retry-After: 1). A network blip or a 5xx is asked once more. */
export const MAX_BUSY_RETRIES = 3;

export function shouldRetry(failures: number, error: unknown): boolean {
  if (error instanceof ApiError && error.status === 429) return failures < MAX_BUSY_RETRIES;
  if (error instanceof ApiError && error.status < 500) return false;
  return failures < 1;
}

export function retryDelay(failures: number, error: unknown): number {
  if (error instanceof ApiError && error.status === 429) return 1000 * 2 ** failures; // 1, 2, 4 s
  return Math.min(1000 * 2 ** failures, 30_000);
}
