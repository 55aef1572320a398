/**
 * Remembers, for this tab, that a session existed: a reload that finds the login revoked can then say
 * "your session ended" instead of showing the login page as if it were a first visit.
 */
const KEY = 'cronplane.hadSession';

export const sessionFlag = {
  set: () => safe(() => sessionStorage.setItem(KEY, '1')),
  clear: () => safe(() => sessionStorage.removeItem(KEY)),
  isSet: () => safe(() => sessionStorage.getItem(KEY) === '1') ?? false,
};

function safe<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined; // storage can be disabled; the message is then only shown within a page's life
  }
}
