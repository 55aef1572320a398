import { useSyncExternalStore } from 'react';

/** Short confirmations after an action succeeded ("Schedule saved"). A module store: mutations
 * announce through the query client's MutationCache (providers.tsx), outside any component. */
export interface Toast {
  id: number;
  message: string;
}

let toasts: Toast[] = [];
let nextId = 1;
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((l) => l());
export const TOAST_MS = 5000;

export function dismissToast(id: number) {
  toasts = toasts.filter((t) => t.id !== id);
  emit();
}

export function showToast(message: string): number {
  const id = nextId++;
  // At most three at once: a burst of actions must not cover the page.
  toasts = [...toasts.slice(-2), { id, message }];
  emit();
  setTimeout(() => dismissToast(id), TOAST_MS);
  return id;
}

export function useToasts(): Toast[] {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => toasts,
  );
}

/** What a mutation says when it succeeded: `meta: { success: 'Job cancelled' }`. */
export type SuccessMessage = string | ((data: unknown, variables: unknown) => string);

declare module '@tanstack/react-query' {
  interface Register {
    mutationMeta: { success?: SuccessMessage };
  }
}

export function announceSuccess(meta: { success?: SuccessMessage } | undefined, data: unknown, variables: unknown) {
  const success = meta?.success;
  if (!success) return;
  showToast(typeof success === 'function' ? success(data, variables) : success);
}
