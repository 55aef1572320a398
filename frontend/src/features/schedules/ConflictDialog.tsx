import { Button, Code, Group, Modal, Stack, Table, Text } from '@mantine/core';
import type { Schedule, ScheduleUpdate } from '../../api/types';
import { formatExact } from '../../lib/time';

const show = (v: unknown) => (v === undefined || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

/** The fields where the edit the user sent and the version now on the server differ. */
export function conflictingFields(mine: ScheduleUpdate, theirs: Schedule): { field: string; mine: unknown; theirs: unknown }[] {
  const server = theirs as unknown as Record<string, unknown>;
  return Object.entries(mine)
    .filter(([field, value]) => JSON.stringify(value ?? null) !== JSON.stringify(server[field] ?? null))
    .map(([field, value]) => ({ field, mine: value, theirs: server[field] }));
}

/**
 * A 412 on save: someone changed the schedule since this form was loaded. Both versions side by
 * side, and the choice stays the user's: take theirs (discarding this edit) or overwrite with mine.
 */
export function ConflictDialog({
  mine,
  theirs,
  pending,
  onUseTheirs,
  onOverwrite,
  onClose,
}: {
  mine: ScheduleUpdate;
  theirs: Schedule;
  pending: boolean;
  onUseTheirs: () => void;
  onOverwrite: () => void;
  onClose: () => void;
}) {
  const rows = conflictingFields(mine, theirs);
  return (
    <Modal opened onClose={onClose} title="Someone else changed this schedule" size="lg">
      <Stack>
        <Text size="sm">
          Your changes were not saved: the schedule is at version {theirs.version} now, changed <Code>{formatExact(theirs.updated_at)}</Code>.
          {rows.length === 0 ? ' Your edit and theirs are the same.' : ' Where the two differ:'}
        </Text>
        {rows.length > 0 && (
          <Table.ScrollContainer minWidth={420}>
            <Table aria-label="Your version and theirs" fz="sm" withTableBorder>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Field</Table.Th>
                  <Table.Th>Yours (not saved)</Table.Th>
                  <Table.Th>Theirs (version {theirs.version})</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((r) => (
                  <Table.Tr key={r.field}>
                    <Table.Td>{r.field}</Table.Td>
                    <Table.Td>
                      <Code block>{show(r.mine)}</Code>
                    </Table.Td>
                    <Table.Td>
                      <Code block>{show(r.theirs)}</Code>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onUseTheirs} disabled={pending}>
            Use theirs (discard mine)
          </Button>
          <Button color="orange" onClick={onOverwrite} loading={pending}>
            Overwrite with mine
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
