import { Button, Group, Text } from '@mantine/core';
import type { Paging } from '../lib/search-params';

/** "2,004 jobs", or "more than 10,000 jobs" when the server stopped counting at its cap. */
export function totalText(count: number, cap: number, noun: string): string {
  return count > cap ? `more than ${cap.toLocaleString('en-US')} ${noun}` : `${count.toLocaleString('en-US')} ${noun}`;
}

/**
 * Keyset paging. The API hands out a next cursor only, so the way back is the trail of cursors this
 * pager followed, which `useUrlPaging` keeps in the URL: a reload on page 3 is still page 3, and
 * Previous goes to page 2. Every move scrolls to the top: the new rows start there, not where
 * "Next page" was.
 */
export function CursorPager({
  paging,
  nextCursor,
  total,
}: {
  paging: Paging;
  nextCursor: string | null | undefined;
  /** e.g. totalText(…): shown beside the page number. */
  total?: string;
}) {
  const { cursor, trail, go } = paging;
  const move = (target: string | null, before: string[]) => {
    go(target, before);
    window.scrollTo({ top: 0 });
  };
  if (!cursor && !nextCursor) return total ? <Text size="sm">{total}</Text> : null;
  const page = cursor === null ? 'Page 1' : `Page ${trail.length + 2}`;
  const previous = trail.at(-1) ?? null;
  return (
    <Group justify="space-between" wrap="wrap">
      <Text size="sm" aria-live="polite">
        {page}
        {total ? ` of ${total}` : ''}
      </Text>
      <Group gap="xs">
        <Button variant="default" size="xs" disabled={!cursor} onClick={() => move(null, [])}>
          First page
        </Button>
        <Button variant="default" size="xs" disabled={!cursor} onClick={() => move(previous, trail.slice(0, -1))}>
          Previous page
        </Button>
        <Button variant="default" size="xs" disabled={!nextCursor} onClick={() => move(nextCursor ?? null, cursor ? [...trail, cursor] : [])}>
          Next page
        </Button>
      </Group>
    </Group>
  );
}
