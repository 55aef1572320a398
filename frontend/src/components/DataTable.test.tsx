import { Anchor, Checkbox, TextInput } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Link } from 'react-router';
import { describe, expect, it } from 'vitest';
import { renderScreen } from '../test/render';
import { DataTable } from './DataTable';

type Row = { id: number };
const columns: ColumnDef<Row, unknown>[] = [
  { header: 'Pick', cell: ({ row }) => <Checkbox aria-label={`Select ${row.original.id}`} /> },
  { header: 'Id', cell: ({ row }) => <Anchor component={Link} to={`/jobs/${row.original.id}`}>#{row.original.id}</Anchor> },
];

const activeRow = () => document.querySelector('tbody tr[data-active]');

describe('data table scrolling', () => {
  it('the focusable, labelled box is the one that scrolls (no inner ScrollArea viewport the keyboard never reaches)', () => {
    renderScreen(<DataTable data={[{ id: 1 }]} columns={columns} label="Jobs" />, { path: '/' });
    const box = screen.getByLabelText('Jobs (scrollable)');
    expect(box).toHaveAttribute('tabindex', '0');
    expect(box).toHaveClass('mantine-TableScrollContainer-scrollContainer');
    expect(box.querySelector('.mantine-ScrollArea-viewport')).toBeNull();
    expect(box.style.getPropertyValue('--table-overflow')).toBe('auto');
  });
});

describe('data table keys', () => {
  it('j and k move the active row, x toggles its checkbox, Enter opens its link', async () => {
    renderScreen(<DataTable data={[{ id: 1 }, { id: 2 }, { id: 3 }]} columns={columns} label="Jobs" />, { path: '/' });
    await userEvent.keyboard('j');
    expect(activeRow()).toHaveTextContent('#1');
    await userEvent.keyboard('jjj');
    expect(activeRow()).toHaveTextContent('#3'); // j stops at the last row
    await userEvent.keyboard('k');
    expect(activeRow()).toHaveTextContent('#2');
    expect(activeRow()).toHaveAttribute('aria-current', 'true');
    await userEvent.keyboard('x');
    expect(screen.getByRole('checkbox', { name: 'Select 2' })).toBeChecked();
    await userEvent.keyboard('{Enter}');
    expect(await screen.findByText('elsewhere')).toBeInTheDocument();
  });

  it('does nothing while someone types in a field', async () => {
    renderScreen(
      <>
        <TextInput aria-label="Search" />
        <DataTable data={[{ id: 1 }]} columns={columns} label="Jobs" />
      </>,
    );
    await userEvent.click(screen.getByRole('textbox', { name: 'Search' }));
    await userEvent.keyboard('jk');
    expect(activeRow()).toBeNull();
    expect(screen.getByRole('textbox', { name: 'Search' })).toHaveValue('jk');
  });
});
