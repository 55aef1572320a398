import { Table } from '@mantine/core';
import { flexRender, getCoreRowModel, useReactTable, type ColumnDef } from '@tanstack/react-table';
import { useEffect, useRef, useState } from 'react';
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

/** A TanStack Table rendered with Mantine's table; sorting and paging stay on the server (keyset cursors). */
/** `loading`: the rows belong to the previous filters while the new ones load; they are dimmed, not passed off as current. */
export function DataTable<T>({
  data,
  columns,
  label,
  loading = false,
}: {
  data: T[];
  columns: ColumnDef<T, unknown>[];
  label: string;
  loading?: boolean;
}) {
  const table = useReactTable({ data, columns, getCoreRowModel: getCoreRowModel() });
  const rows = table.getRowModel().rows;
  const { active, body } = useRowKeys(rows.length);
  return (
    // Scrolls inside its card on a phone (never widens the page); focusable so the keyboard can scroll it.
    <Table.ScrollContainer minWidth={560} tabIndex={0} aria-label={`${label} (scrollable)`}>
      <Table striped highlightOnHover withTableBorder aria-label={label} aria-busy={loading} fz="sm" style={loading ? { opacity: 0.5 } : undefined}>
        <Table.Thead>
          {table.getHeaderGroups().map((hg) => (
            <Table.Tr key={hg.id}>
              {hg.headers.map((h) => (
                <Table.Th key={h.id}>{h.isPlaceholder ? null : flexRender(h.column.columnDef.header, h.getContext())}</Table.Th>
              ))}
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
