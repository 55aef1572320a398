import { Button, Group, Text } from '@mantine/core';
import { useState } from 'react';

/** "2,004 jobs", or "more than 10,000 jobs" when the server stopped counting at its cap. */
export function totalText(count: number, cap: number, noun: string): string {
  return count > cap ? `more than ${cap.toLocaleString('en-US')} ${noun}` : `${count.toLocaleString('en-US')} ${noun}`;
}

/**
 * Keyset paging. The API hands out a next cursor only, so the way back is the trail of cursors this
 * pager followed (a reload on page 3 keeps "First page"; Previous then goes there). Every move
 * scrolls to the top: the new rows start there, not where "Next page" was.
 */
export function CursorPager({
  cursor,
  nextCursor,
  onChange,
  total,
}: {
  cursor: string | null;
  nextCursor: string | null | undefined;
  onChange: (cursor: string | null) => void;
  /** e.g. totalText(…): shown beside the page number. */
  total?: string;
}) {
  // The trail belongs to the cursor it led to: when the cursor changes from outside (a new filter
  // resets it), the old trail no longer applies.
  const [trail, setTrail] = useState<{ at: string | null; before: (string | null)[] }>({ at: null, before: [] });
  const known = trail.at === cursor ? trail.before : [];
  const go = (target: string | null, before: (string | null)[]) => {
    setTrail({ at: target, before });
    onChange(target);
    window.scrollTo({ top: 0 });
  };
  if (!cursor && !nextCursor) return total ? <Text size="sm">{total}</Text> : null;
  const page = cursor === null ? 'Page 1' : known.length > 0 ? `Page ${known.length + 1}` : 'A later page';
  return (
    <Group justify="space-between" wrap="wrap">
      <Text size="sm" aria-live="polite">
        {page}
        {total ? ` of ${total}` : ''}
      </Text>
      <Group gap="xs">
        <Button variant="default" size="xs" disabled={!cursor} onClick={() => go(null, [])}>
          First page
        </Button>
        <Button variant="default" size="xs" disabled={!cursor} onClick={() => go(known.at(-1) ?? null, known.slice(0, -1))}>
          Previous page
        </Button>
        <Button variant="default" size="xs" disabled={!nextCursor} onClick={() => go(nextCursor ?? null, [...known, cursor])}>
          Next page
        </Button>
      </Group>
    </Group>
  );
}
