/** Single-key shortcuts (j/k in tables) must never fire while someone types, or under a dialog. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag !== 'INPUT') return false;
  const type = (target as HTMLInputElement).type;
  return !['checkbox', 'radio', 'button', 'submit', 'reset'].includes(type);
}

export function isPlainKey(event: KeyboardEvent): boolean {
  return !event.ctrlKey && !event.metaKey && !event.altKey;
}

export function dialogOpen(): boolean {
  return document.querySelector('[role="dialog"][aria-modal="true"]') !== null;
}

/** The last table mounted owns j/k, so two tables on one page do not both move. */
const owners: symbol[] = [];

export function claimTableKeys(): { owns: () => boolean; release: () => void } {
  const me = Symbol('table');
  owners.push(me);
  return {
    owns: () => owners[owners.length - 1] === me,
    release: () => {
      const at = owners.indexOf(me);
      if (at >= 0) owners.splice(at, 1);
    },
  };
}
