import { Button, Group } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { useId, useState, type ReactNode } from 'react';

/**
 * A list's filters behind a "Filters (n)" button, n the filters set now: on a phone seven filters
 * filled the first screen before the first row (review 2026-12-05 §5.12), and on a desktop they
 * cost rows. Open at first on a desktop when a filter is set (so a shared link shows what it
 * filters by); closed at first on a phone. `lead`: what stays beside the button (the search box);
 * `before`: what shares its line, on the left (the jobs list's status tabs).
 */
export function FilterPanel({ count, label, before, lead, children }: { count: number; label: string; before?: ReactNode; lead?: ReactNode; children: ReactNode }) {
  const phone = useMediaQuery('(max-width: 47.99em)', false, { getInitialValueInEffect: false });
  const [open, setOpen] = useState(() => count > 0 && !phone);
  const id = useId();
  return (
    <div role="search" aria-label={label}>
      <Group align="flex-end" gap="sm" wrap="wrap" justify="space-between">
        {before}
        <Group align="flex-end" gap="sm" wrap="nowrap">
        {lead}
        <Button variant={open ? 'light' : 'default'} aria-expanded={open} aria-controls={id} onClick={() => setOpen((o) => !o)} data-testid="filters-toggle">
          Filters ({count})
        </Button>
        </Group>
      </Group>
      <div id={id} hidden={!open}>
        {open && (
          <Group align="flex-end" wrap="wrap" mt="sm">
            {children}
          </Group>
        )}
      </div>
    </div>
  );
}
