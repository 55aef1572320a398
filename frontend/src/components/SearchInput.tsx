import { TextInput } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import { useRef, useState, type ReactNode } from 'react';

/**
 * The list pages' search box: what is typed shows at once, while the URL (and so the query)
 * follows 300 ms after the last key, so a word is one request, not one per letter.
 */
export function SearchInput({
  initial,
  placeholder,
  onSearch,
  error,
  hideLabel = false,
}: {
  /** The label for assistive technology only (a list whose filter row has no room for it). */
  hideLabel?: boolean;
  initial: string;
  placeholder: string;
  onSearch: (q: string) => void;
  /** What the server said of the search itself (422 on `q`): shown under the box, where it is fixed. */
  error?: ReactNode;
}) {
  const [value, setValue] = useState(initial);
  // The URL can change under the box (a "Clear filters" link, Back): the box follows it, but not
  // the echo of its own search, which may be older than what is typed by now.
  const [seen, setSeen] = useState(initial);
  const [pushed, setPushed] = useState(initial);
  if (initial !== seen) {
    setSeen(initial);
    if (initial !== pushed) setValue(initial);
  }
  // Where the browser was when the key was typed. A click on a result right after typing moves
  // the browser on at once, while React keeps this page mounted until the next page's code is in
  // (a transition, or a Suspense fallback that hides rather than unmounts it), so the debounce is
  // not cancelled: its search would then navigate back to this list and undo the click.
  const typedAt = useRef('');
  const push = useDebouncedCallback((q: string) => {
    if (window.location.pathname !== typedAt.current) return;
    setPushed(q);
    onSearch(q);
  }, 300);
  return (
    <TextInput
      label={hideLabel ? undefined : 'Search'}
      aria-label={hideLabel ? 'Search' : undefined}
      placeholder={placeholder}
      type="search"
      w={{ base: 200, xs: 240 }}
      value={value}
      error={error}
      onChange={(e) => {
        typedAt.current = window.location.pathname;
        setValue(e.currentTarget.value);
        push(e.currentTarget.value);
      }}
    />
  );
}
