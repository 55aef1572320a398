/**
 * `load`, resolved once mantine-later.css is in the document too: every lazy part of the console
 * loads through this, so a dialog, a menu or a checkbox never renders before its styles (Vite's
 * preload of a dynamic import waits for the chunk's stylesheet).
 */
export function withLaterStyles<T>(load: () => Promise<T>): () => Promise<T> {
  return async () => (await Promise.all([load(), import('./later-styles')]))[0];
}
