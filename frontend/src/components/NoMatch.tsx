import { Anchor } from '@mantine/core';

/** A filtered list's empty state: says that the filters, not the data, emptied it, and offers the
 * way back (review 2.12: a bare "No … match" left the operator to find and clear each field). */
export function NoMatch({ text, onClear, clearLabel = 'Clear filters' }: { text: string; onClear: () => void; clearLabel?: string }) {
  return (
    <>
      <span>{text}</span>{' '}
      <Anchor component="button" type="button" fz="inherit" onClick={onClear}>
        {clearLabel}
      </Anchor>
      .
    </>
  );
}
