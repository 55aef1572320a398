import { Group, Progress, Stack, Text } from '@mantine/core';

/** "3 of 5 schedules" with a bar; an unlimited quota shows the count alone. */
export function UsageBar({ label, used, limit }: { label: string; used: number; limit: number | null | undefined }) {
  if (limit == null) {
    return (
      <Text size="sm">
        {label}: {used} (unlimited)
      </Text>
    );
  }
  const percent = limit === 0 ? 100 : Math.min(100, (used / limit) * 100);
  const color = percent >= 100 ? 'red' : percent >= 80 ? 'orange' : 'blue';
  return (
    <Stack gap={2}>
      <Group justify="space-between" gap="xs">
        <Text size="sm">{label}</Text>
        <Text size="sm">
          {used} of {limit}
        </Text>
      </Group>
      <Progress value={percent} color={color} aria-label={`${label}: ${used} of ${limit}`} />
    </Stack>
  );
}
