import { Table, UnstyledButton } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { flexRender, getCoreRowModel, useReactTable, type ColumnDef } from '@tanstack/react-table';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { claimTableKeys, dialogOpen, isPlainKey, isTypingTarget } from '../lib/keyboard';

/**
 * j / k move the active row down / up (Oban Web style), Enter or o opens its first link, x toggles its checkbox. Only when
 * nobody is typing and no dialog is open; the active row is outlined and scrolled into view.
 */
function useRowKeys(rowCount: number) {
  const [active, setActive] = useState<number | null>(null);
  const body = useRef<HTMLTableSectionElement>(null);
  const latest = useRef({ active, rowCount });
  latest.current = { active, rowCount };
  useEffect(() => {
    const keys = claimTableKeys();
    const onKey = (event: KeyboardEvent) => {
      if (!keys.owns() || !isPlainKey(event) || isTypingTarget(event.target) || dialogOpen()) return;
      const { active: at, rowCount: count } = latest.current;
      if (count === 0) return;
      const row = at === null ? null : body.current?.rows.item(at);
      if (event.key === 'j' || event.key === 'k') {
        event.preventDefault();
        const next = at === null ? 0 : Math.min(count - 1, Math.max(0, at + (event.key === 'j' ? 1 : -1)));
        setActive(next);
        body.current?.rows.item(next)?.scrollIntoView?.({ block: 'nearest' });
      } else if ((event.key === 'Enter' || event.key === 'o') && row && !(event.target instanceof HTMLAnchorElement)) {
        const link = row.querySelector<HTMLAnchorElement>('a[href]');
        if (link) {
          event.preventDefault();
          link.click();
        }
      } else if (event.key === 'x' && row) {
        const box = row.querySelector<HTMLInputElement>('input[type="checkbox"]');
        if (box) {
          event.preventDefault();
          box.click();
        }
      }
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      keys.release();
    };
  }, []);
  // New rows (another page, other filters): the old position means nothing.
  useEffect(() => setActive((a) => (a !== null && a >= rowCount ? null : a)), [rowCount]);
  return { active, body };
}

declare module '@tanstack/react-table' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface ColumnMeta<TData, TValue> {
    /** The column's width in a dense table (fixed layout: the table never outgrows its box). */
    width?: number | string;
    /** The API's sort key this header sorts by (`finished_at`); its first click sorts `first`. */
    sortKey?: string;
    first?: 'asc' | 'desc';
  }
}

/** A list's order as the API takes it: `finished_at`, or `-finished_at` descending. */
export interface TableSort {
  value: string;
  onChange: (next: string) => void;
}

/** What a header click asks for: the other direction of the column sorted now, else its first. */
export function nextSort(current: string, key: string, first: 'asc' | 'desc' = 'desc'): string {
  if (current === key) return `-${key}`;
  if (current === `-${key}`) return key;
  return first === 'desc' ? `-${key}` : key;
}

function SortHeader({ label, sortKey, first, sort }: { label: ReactNode; sortKey: string; first?: 'asc' | 'desc'; sort: TableSort }) {
  const state = sort.value === sortKey ? 'ascending' : sort.value === `-${sortKey}` ? 'descending' : null;
  return (
    <UnstyledButton
      className="cp-sort-header"
      onClick={() => sort.onChange(nextSort(sort.value, sortKey, first))}
      data-sorted={state ?? undefined}
    >
      {label}
      {/* The arrow is decoration: the header's aria-sort says the order. */}
      <span aria-hidden="true" className="cp-sort-arrow">
        {state === 'ascending' ? ' ▲' : state === 'descending' ? ' ▼' : ' ↕'}
      </span>
    </UnstyledButton>
  );
}

/** A TanStack Table rendered with Mantine's table; sorting and paging stay on the server (keyset cursors). */
/** `loading`: the rows belong to the previous filters while the new ones load; they are dimmed, not passed off as current. */
/** `dense`: one line per row (cells clipped with an ellipsis, the full text in their title), fixed
 * column widths from each column's `meta.width`, so the table fits its box at 1440 px instead of
 * scrolling sideways (review 2026-12-05 §5.3). `sort`: headers with a `meta.sortKey` sort the list.
 * `card`: on a phone each row is drawn by it as a card in a list instead of a table row. */
export function DataTable<T>({
  data,
  columns,
  label,
  loading = false,
  dense = false,
  sort,
  card,
}: {
  data: T[];
  columns: ColumnDef<T, unknown>[];
  label: string;
  loading?: boolean;
  dense?: boolean;
  sort?: TableSort;
  card?: (row: T) => ReactNode;
}) {
  const table = useReactTable({ data, columns, getCoreRowModel: getCoreRowModel() });
  const rows = table.getRowModel().rows;
  const { active, body } = useRowKeys(rows.length);
  const phone = useMediaQuery('(max-width: 47.99em)', false, { getInitialValueInEffect: false });
  if (card && phone) {
    return (
      <ul className="cp-cards" aria-label={label} aria-busy={loading} style={loading ? { opacity: 0.5 } : undefined}>
        {data.map((item, index) => (
          <li key={rows[index]?.id ?? index} className="cp-card">
            {card(item)}
          </li>
        ))}
      </ul>
    );
  }
  return (
    // Scrolls inside its card on a phone (never widens the page); focusable so the keyboard can
    // scroll it. Native: the focusable, labelled box is the one that scrolls (in Mantine's
    // ScrollArea an inner viewport scrolls, which the keyboard never reached).
    <Table.ScrollContainer type="native" minWidth={560} tabIndex={0} aria-label={`${label} (scrollable)`}>
      <Table
        striped
        highlightOnHover
        withTableBorder
        aria-label={label}
        aria-busy={loading}
        fz={dense ? 'xs' : 'sm'}
        verticalSpacing={dense ? 3 : undefined}
        horizontalSpacing={dense ? 6 : undefined}
        className={dense ? 'cp-dense' : undefined}
        style={loading ? { opacity: 0.5 } : undefined}
      >
        <Table.Thead>
          {table.getHeaderGroups().map((hg) => (
            <Table.Tr key={hg.id}>
              {hg.headers.map((h) => {
                const meta = h.column.columnDef.meta;
                const content = h.isPlaceholder ? null : flexRender(h.column.columnDef.header, h.getContext());
                const sortKey = meta?.sortKey;
                const ariaSort = sort && sortKey ? (sort.value === sortKey ? 'ascending' : sort.value === `-${sortKey}` ? 'descending' : 'none') : undefined;
                return (
                  <Table.Th key={h.id} aria-sort={ariaSort} style={dense && meta?.width !== undefined ? { width: meta.width } : undefined}>
                    {sort && sortKey ? <SortHeader label={content} sortKey={sortKey} first={meta?.first} sort={sort} /> : content}
                  </Table.Th>
                );
              })}
            </Table.Tr>
          ))}
        </Table.Thead>
        <Table.Tbody ref={body}>
          {rows.map((row, index) => (
            <Table.Tr key={row.id} data-active={index === active || undefined} aria-current={index === active ? 'true' : undefined}>
              {row.getVisibleCells().map((cell) => (
                <Table.Td key={cell.id}>{flexRender(cell.column.columnDef.cell, cell.getContext())}</Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
