import { TextInput } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import { useState } from 'react';

/**
 * The list pages' search box: what is typed shows at once, while the URL (and so the query)
 * follows 300 ms after the last key, so a word is one request, not one per letter.
 */
export function SearchInput({
  initial,
  placeholder,
  onSearch,
}: {
  initial: string;
  placeholder: string;
  onSearch: (q: string) => void;
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
  const push = useDebouncedCallback((q: string) => {
    setPushed(q);
    onSearch(q);
  }, 300);
  return (
    <TextInput
      label="Search"
      placeholder={placeholder}
      type="search"
      w={240}
      value={value}
      onChange={(e) => {
        setValue(e.currentTarget.value);
        push(e.currentTarget.value);
      }}
    />
  );
}
