/**
 * The console's project scope: the project chosen in the header's switcher narrows every list the
 * API answers (jobs, schedules, audit, stats, queues, job counts, notification channels), every
 * bulk filter, and is the default `project` of a new job, schedule or notification channel. It lives here, in the fetch the API client uses, so
 * no page can forget it and a page written later gets it for free.
 *
 * `null` means every project the caller can read (the API's own default for lists).
 */

let current: string | null = null;

export function setScopedProject(slug: string | null): void {
  current = slug;
}

export function scopedProject(): string | null {
  return current;
}

// `secrets`: a project's secret names (the API answers one project's; `default` without it).
const LISTS = /^\/api\/v1\/(jobs|jobs\/count|jobs\/status-counts|schedules|schedules\/count|audit|stats|stats\/windows|queues|queues\/history|notification-channels|secrets|batches)$/;
const BULK = /^\/api\/v1\/jobs\/bulk\/(cancel|retry)$/;
const CREATES = /^\/api\/v1\/(jobs|schedules|notification-channels|batches)$/;

async function withBody(request: Request, change: (body: Record<string, unknown>) => boolean): Promise<Request> {
  let body: unknown;
  try {
    body = JSON.parse(await request.clone().text());
  } catch {
    return request;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return request;
  const copy = { ...(body as Record<string, unknown>) };
  if (!change(copy)) return request;
  return new Request(request, { body: JSON.stringify(copy) });
}

/** The request with the scope applied: a `project` the caller set itself always wins. */
export async function scopeRequest(request: Request, project: string | null = current): Promise<Request> {
  if (!project) return request;
  const url = new URL(request.url);
  if (request.method === 'GET' && LISTS.test(url.pathname)) {
    if (url.searchParams.has('project')) return request;
    url.searchParams.append('project', project);
    return new Request(url, request);
  }
  if (request.method === 'POST' && BULK.test(url.pathname)) {
    return withBody(request, (body) => {
      const filter = body.filter as Record<string, unknown> | null | undefined;
      if (!filter || typeof filter !== 'object' || 'project' in filter) return false;
      body.filter = { ...filter, project: [project] };
      return true;
    });
  }
  if (request.method === 'POST' && CREATES.test(url.pathname)) {
    return withBody(request, (body) => {
      if (body.project) return false;
      body.project = project;
      return true;
    });
  }
  return request;
}

export function withProjectScope(baseFetch: typeof fetch = (...a) => globalThis.fetch(...a)): typeof fetch {
  return async (input: RequestInfo | URL, init?: RequestInit) => baseFetch(await scopeRequest(new Request(input, init)));
}
