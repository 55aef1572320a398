import type { Queue } from '../../api/types';

/** What the Queues page's URL asks for: `?queue=` names one queue (`project/name`, as audit
 * events name their target, or a bare name in any project); `?q=` is a search, each word a prefix
 * of the queue's name, of a part of it (`sync` finds `payments.sync`) or of its project. The list
 * is never paged (every queue comes in one answer), so both filter in the browser. */
export interface QueueFilter {
  queue?: string | null;
  q?: string | null;
}

const parts = (text: string) => [text, ...text.split(/[._-]/)].filter(Boolean);

export function matchesQueue(queue: Pick<Queue, 'project' | 'name'>, { queue: named, q }: QueueFilter): boolean {
  if (named) {
    const slash = named.indexOf('/');
    const matches = slash < 0 ? queue.name === named : queue.project === named.slice(0, slash) && queue.name === named.slice(slash + 1);
    if (!matches) return false;
  }
  const words = (q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  const candidates = [...parts(queue.name.toLowerCase()), queue.project.toLowerCase(), `${queue.project}/${queue.name}`.toLowerCase()];
  return words.every((w) => candidates.some((c) => c.startsWith(w)));
}
