import type { Role } from '../api/types';

export type Command = { id: string; label: string; hint: string; to: string; role: Role };

/** Pages and actions the palette offers, filtered by what the caller's role may open. */
export const ACTIONS: Command[] = [
  { id: 'go-dashboard', label: 'Go to dashboard', hint: 'page', to: '/', role: 'VIEWER' },
  { id: 'go-jobs', label: 'Go to jobs', hint: 'page', to: '/jobs', role: 'VIEWER' },
  { id: 'go-schedules', label: 'Go to schedules', hint: 'page', to: '/schedules', role: 'VIEWER' },
  { id: 'go-batches', label: 'Go to batches', hint: 'page', to: '/batches', role: 'VIEWER' },
  { id: 'waiting-jobs', label: 'Show waiting jobs', hint: 'filter', to: '/jobs?status=WAITING', role: 'VIEWER' },
  { id: 'failed-jobs', label: 'Show dead jobs', hint: 'filter', to: '/jobs?status=DEAD', role: 'VIEWER' },
  { id: 'running-jobs', label: 'Show running jobs', hint: 'filter', to: '/jobs?status=RUNNING', role: 'VIEWER' },
  { id: 'new-job', label: 'New job', hint: 'action', to: '/jobs/new', role: 'OPERATOR' },
  { id: 'new-schedule', label: 'New schedule', hint: 'action', to: '/schedules/new', role: 'ADMIN' },
  { id: 'go-audit', label: 'Go to audit log', hint: 'page', to: '/audit', role: 'OPERATOR' },
  { id: 'go-users', label: 'Go to users', hint: 'page', to: '/users', role: 'ADMIN' },
  { id: 'go-chaos', label: 'Go to chaos experiments', hint: 'page', to: '/chaos', role: 'ADMIN' },
  { id: 'go-account', label: 'Go to your account (API tokens, password)', hint: 'page', to: '/account', role: 'VIEWER' },
];

/** "2004", "#2004" and "job 2004" all name job 2004. */
export function jobIdIn(query: string): number | null {
  const match = /^(?:job\s*)?#?\s*(\d{1,18})$/i.exec(query.trim());
  if (!match) return null;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/** What the palette lists for a query: a job id first, then schedules by name, then matching actions. */
export function commandsFor(
  query: string,
  can: (role: Role) => boolean,
  schedules: { id: number; name: string }[],
): Command[] {
  const q = query.trim().toLowerCase();
  const out: Command[] = [];
  const id = jobIdIn(q);
  if (id !== null) out.push({ id: `job-${id}`, label: `Open job #${id}`, hint: 'job', to: `/jobs/${id}`, role: 'VIEWER' });
  if (q) {
    for (const s of schedules) {
      if (s.name.toLowerCase().includes(q)) {
        out.push({ id: `schedule-${s.id}`, label: s.name, hint: 'schedule', to: `/schedules/${s.id}`, role: 'VIEWER' });
      }
    }
  }
  const words = q.split(/\s+/).filter(Boolean);
  for (const action of ACTIONS) {
    const text = `${action.label} ${action.hint}`.toLowerCase();
    if (can(action.role) && words.every((w) => text.includes(w))) out.push(action);
  }
  return out;
}

/** ⌘K on a Mac, Ctrl-K elsewhere; with a modifier, so it also works while typing in a field. */
export function isPaletteKey(event: KeyboardEvent) {
  return (event.metaKey || event.ctrlKey) && !event.altKey && event.key.toLowerCase() === 'k';
}
