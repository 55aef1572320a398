import { useEffect, useState, useSyncExternalStore } from 'react';

/** Choices of the live views' interval picker, in milliseconds; 0 is Pause. */
export const POLL_CHOICES = [0, 1000, 2000, 5000, 10000] as const;
export type PollChoice = (typeof POLL_CHOICES)[number];
const STORAGE_KEY = 'cronplane.pollInterval';

function subscribeVisibility(onChange: () => void) {
  document.addEventListener('visibilitychange', onChange);
  return () => document.removeEventListener('visibilitychange', onChange);
}

export function usePageVisible(): boolean {
  return useSyncExternalStore(subscribeVisibility, () => document.visibilityState !== 'hidden');
}

function readStored(fallback: PollChoice): PollChoice {
  try {
    const v = Number(localStorage.getItem(STORAGE_KEY));
    return (POLL_CHOICES as readonly number[]).includes(v) && localStorage.getItem(STORAGE_KEY) !== null
      ? (v as PollChoice)
      : fallback;
  } catch {
    return fallback;
  }
}

/**
 * The interval the user picked, and the one to poll at now: `false` when paused by the user or while the
 * tab is hidden (no point loading numbers nobody sees; polling resumes, with a fresh fetch, on return).
 */
export function usePolling(fallback: PollChoice = 5000) {
  const [choice, setChoiceState] = useState<PollChoice>(() => readStored(fallback));
  const visible = usePageVisible();
  useEffect(() => {
    try {
      localStorage.setItem(STORAGE_KEY, String(choice));
    } catch {
      /* storage may be unavailable (private mode); the choice then lasts the page */
    }
  }, [choice]);
  const refetchInterval: number | false = choice > 0 && visible ? choice : false;
  return { choice, setChoice: setChoiceState, visible, refetchInterval, paused: refetchInterval === false };
}
