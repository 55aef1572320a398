import { Badge, Button, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { showJson, type FieldChange } from '../lib/json-compare';

const VALUE: React.CSSProperties = {
  margin: 0,
  whiteSpace: 'pre-wrap',
  overflowWrap: 'anywhere',
  fontFamily: 'var(--mantine-font-family-monospace)',
  fontSize: 'var(--mantine-font-size-xs)',
};

/**
 * Two versions field by field, side by side: the changed fields first, each value wrapped in its
 * half of the width (no sideways scroll, so both columns stay on screen), the unchanged ones
 * folded behind a button. Used by the audit diff and the edit-conflict dialog (issue 45).
 */
export function SideBySideDiff({
  rows,
  beforeLabel,
  afterLabel,
  label,
}: {
  rows: FieldChange[];
  beforeLabel: string;
  afterLabel: string;
  label: string;
}) {
  const [showSame, setShowSame] = useState(false);
  const changed = rows.filter((r) => r.change !== 'same');
  const same = rows.filter((r) => r.change === 'same');
  const shown = showSame ? rows : changed;
  return (
    <>
      <Table withTableBorder fz="sm" aria-label={label} layout="fixed" verticalSpacing={6}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th w="20%">Field</Table.Th>
            <Table.Th w="40%">{beforeLabel}</Table.Th>
            <Table.Th w="40%">{afterLabel}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {shown.map((r) => (
            <Table.Tr key={r.field} data-change={r.change} bg={r.change === 'same' ? undefined : 'var(--mantine-color-yellow-light)'}>
              <Table.Td style={{ overflowWrap: 'anywhere', verticalAlign: 'top' }}>
                <Text size="sm" fw={r.change === 'same' ? undefined : 700}>
                  {r.field}
                </Text>
                {r.change !== 'same' && <Badge size="xs">{r.change}</Badge>}
              </Table.Td>
              <Table.Td style={{ verticalAlign: 'top' }}>
                <pre style={VALUE}>{r.change === 'added' ? '(absent)' : showJson(r.before)}</pre>
              </Table.Td>
              <Table.Td style={{ verticalAlign: 'top' }}>
                <pre style={VALUE}>{r.change === 'removed' ? '(absent)' : showJson(r.after)}</pre>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {changed.length === 0 && (
        <Text size="sm" c="dimmed">
          No field changed.
        </Text>
      )}
      {same.length > 0 && (
        <Button variant="subtle" size="compact-sm" onClick={() => setShowSame((v) => !v)} aria-expanded={showSame} style={{ alignSelf: 'flex-start' }}>
          {showSame ? 'Hide' : 'Show'} the {same.length} unchanged field{same.length === 1 ? '' : 's'}
        </Button>
      )}
    </>
  );
}
