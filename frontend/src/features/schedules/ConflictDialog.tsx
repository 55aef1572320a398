import { Button, Code, Group, Modal, Stack, Text } from '@mantine/core';
import type { Schedule, ScheduleUpdate } from '../../api/types';
import { SideBySideDiff } from '../../components/SideBySideDiff';
import { sameJson, type FieldChange } from '../../lib/json-compare';
import { formatExact } from '../../lib/time';

/** The fields where the edit the user sent and the version now on the server differ, compared by
 * content (the same alerts object with its keys in another order is no difference). */
export function conflictingFields(mine: ScheduleUpdate, theirs: Schedule): { field: string; mine: unknown; theirs: unknown }[] {
  const server = theirs as unknown as Record<string, unknown>;
  return Object.entries(mine)
    .filter(([field, value]) => !sameJson(value, server[field]))
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
    <Modal opened onClose={onClose} title="Someone else changed this schedule" size="min(1100px, 96vw)">
      <Stack>
        <Text size="sm">
          Your changes were not saved: schedule <strong>{theirs.name}</strong> is at version {theirs.version} now, changed <Code>{formatExact(theirs.updated_at)}</Code>.
          {rows.length === 0 ? ' Your edit and theirs are the same.' : ' Where the two differ:'}
        </Text>
        {rows.length > 0 && (
          <SideBySideDiff
            rows={rows.map((r): FieldChange => ({ field: r.field, before: r.mine, after: r.theirs, change: 'changed' }))}
            beforeLabel="Yours (not saved)"
            afterLabel={`Theirs (version ${theirs.version})`}
            label="Your version and theirs"
          />
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
