import { Badge, Group, SegmentedControl, Text } from '@mantine/core';
import { POLL_CHOICES, type PollChoice } from '../lib/polling';
import { formatClock } from '../lib/time';

const label = (ms: PollChoice) => (ms === 0 ? 'Pause' : `${ms / 1000} s`);

/** The live views' refresh control, plus honest status: paused, hidden, reconnecting, last update. */
export function PollingPicker({
  choice,
  onChange,
  visible,
  failing,
  updatedAt,
}: {
  choice: PollChoice;
  onChange: (c: PollChoice) => void;
  visible: boolean;
  failing: boolean;
  updatedAt: number;
}) {
  return (
    <Group gap="sm" wrap="wrap">
      <Text size="sm" id="poll-label">
        Refresh
      </Text>
      <SegmentedControl
        aria-labelledby="poll-label"
        size="xs"
        value={String(choice)}
        onChange={(v) => onChange(Number(v) as PollChoice)}
        data={POLL_CHOICES.map((ms) => ({ value: String(ms), label: label(ms) }))}
      />
      {choice === 0 && <Badge color="gray">Paused</Badge>}
      {choice !== 0 && !visible && <Badge color="gray">Paused while the tab is hidden</Badge>}
      {failing && (
        <Badge color="orange" role="status">
          Reconnecting…
        </Badge>
      )}
      {updatedAt > 0 && (
        <Text size="xs" c={failing ? 'orange' : 'dimmed'}>
          {failing ? 'Showing data from ' : 'Updated '}
          {formatClock(updatedAt)}
        </Text>
      )}
    </Group>
  );
}
