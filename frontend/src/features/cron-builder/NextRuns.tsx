import { Badge, Table, Text, Tooltip } from '@mantine/core';
import { formatInZone, offsetAt } from '../../lib/time';

export interface RunRow {
  iso: string;
  offset: string;
  dstChange: boolean;
}

/** Marks runs whose UTC offset in the schedule's zone differs from the run before (the first: from now). */
export function markDstChanges(runs: string[], timeZone: string, now: string = new Date().toISOString()): RunRow[] {
  let previous = offsetAt(now, timeZone);
  return runs.map((iso) => {
    const offset = offsetAt(iso, timeZone);
    const row = { iso, offset, dstChange: offset !== previous };
    previous = offset;
    return row;
  });
}

export function NextRuns({ runs, timeZone, viewerZone }: { runs: string[]; timeZone: string; viewerZone: string }) {
  const rows = markDstChanges(runs, timeZone);
  // One time column when the viewer is in the schedule's zone: two equal columns made each date
  // wrap onto four lines on a phone and pushed the DST column out of view (the review re-walk).
  const same = timeZone === viewerZone;
  return (
    <Table striped withTableBorder fz="sm" aria-label="Next runs">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>#</Table.Th>
          <Table.Th>{same ? `In ${timeZone} (your zone too)` : `In ${timeZone}`}</Table.Th>
          {!same && <Table.Th>In your zone ({viewerZone})</Table.Th>}
          <Table.Th>DST</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((r, i) => (
          <Table.Tr key={r.iso}>
            <Table.Td>{i + 1}</Table.Td>
            <Table.Td>{formatInZone(r.iso, timeZone)}</Table.Td>
            {!same && <Table.Td>{formatInZone(r.iso, viewerZone)}</Table.Td>}
            <Table.Td>
              {r.dstChange ? (
                <Tooltip label={`The UTC offset in ${timeZone} changes to ${r.offset} before this run`}>
                  <Badge color="orange" variant="light" tabIndex={0}>
                    DST change
                  </Badge>
                </Tooltip>
              ) : (
                <Text size="xs" c="dimmed">
                  —
                </Text>
              )}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
