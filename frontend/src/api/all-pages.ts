/** The page size the console asks for when it needs a whole list (the API's maximum). */
export const MAX_PAGE = 200;

type Page<T> = { items: T[]; next_cursor: string | null };

/**
 * Every item of a `{items, next_cursor}` list, following `next_cursor` page after page: for
 * the short lists the console shows whole (the project switcher, notification channels). `page`
 * fetches one page from a cursor (`undefined`: the first).
 */
export async function allPages<T>(page: (cursor: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const data = await page(cursor);
    items.push(...data.items);
    cursor = data.next_cursor ?? undefined;
  } while (cursor);
  return items;
}
