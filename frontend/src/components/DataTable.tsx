import { Table } from '@mantine/core';
import { flexRender, getCoreRowModel, useReactTable, type ColumnDef } from '@tanstack/react-table';

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
        <Table.Tbody>
          {table.getRowModel().rows.map((row) => (
            <Table.Tr key={row.id}>
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
