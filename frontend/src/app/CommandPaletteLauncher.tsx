import { lazy, Suspense, useEffect, useState } from 'react';
import { withLaterStyles } from '../components/with-later-styles';
import { isPaletteKey } from './command-palette';

// The palette (a Modal, a ScrollArea, its commands) is not drawn until someone asks for it: built
// closed on every page it was ~10 % of the shell's first render at 4x CPU throttling (bench console).
const CommandPalette = lazy(async () => ({ default: (await withLaterStyles(() => import('./CommandPalette'))()).CommandPalette }));

/** Listens for ⌘K / Ctrl-K; the first press loads the palette, opened, and it listens from then on. */
export function CommandPaletteLauncher() {
  const [wanted, setWanted] = useState(false);
  useEffect(() => {
    if (wanted) return undefined;
    const onKey = (event: KeyboardEvent) => {
      if (!isPaletteKey(event)) return;
      event.preventDefault();
      setWanted(true);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [wanted]);
  if (!wanted) return null;
  return (
    <Suspense fallback={null}>
      <CommandPalette defaultOpened />
    </Suspense>
  );
}
