import { Badge, Group, Progress, Text } from '@mantine/core';
import type { Batch, BatchState } from '../../api/types';

const COLORS: Record<BatchState, string> = { running: 'blue', succeeded: 'green', failed: 'red', cancelled: 'yellow' };

export function BatchStateBadge({ state }: { state: BatchState }) {
  return (
    <Badge color={COLORS[state]} variant="light">
      {state}
    </Badge>
  );
}

/** Finished jobs of the batch out of its total (the callback is not counted), with a bar. */
export function BatchProgress({ batch }: { batch: Batch }) {
  const finished = batch.succeeded + batch.dead + batch.cancelled;
  const share = (n: number) => (batch.total ? (100 * n) / batch.total : 0);
  return (
    <Group gap="xs" wrap="nowrap" miw={160}>
      <Progress.Root size="md" w={100} aria-hidden>
        <Progress.Section value={share(batch.succeeded)} color="green" />
        <Progress.Section value={share(batch.dead)} color="red" />
        <Progress.Section value={share(batch.cancelled)} color="yellow" />
      </Progress.Root>
      <Text size="sm" data-testid="batch-progress">
        {finished} / {batch.total}
      </Text>
    </Group>
  );
}
