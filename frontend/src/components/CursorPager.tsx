import { Button, Group } from '@mantine/core';

/** Keyset paging: the API hands out a next cursor only; "first page" is the way back. */
export function CursorPager({
  cursor,
  nextCursor,
  onChange,
}: {
  cursor: string | null;
  nextCursor: string | null | undefined;
  onChange: (cursor: string | null) => void;
}) {
  if (!cursor && !nextCursor) return null;
  return (
    <Group justify="flex-end">
      <Button variant="default" size="xs" disabled={!cursor} onClick={() => onChange(null)}>
        First page
      </Button>
      <Button variant="default" size="xs" disabled={!nextCursor} onClick={() => onChange(nextCursor ?? null)}>
        Next page
      </Button>
    </Group>
  );
}
