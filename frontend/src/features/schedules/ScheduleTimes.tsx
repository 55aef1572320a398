import { Stack, Text } from '@mantine/core';
import { formatInZone, VIEWER_TIME_ZONE } from '../../lib/time';

/** A fire time in the schedule's zone, and in the viewer's when that differs. */
export function ScheduleTime({ iso, timeZone }: { iso: string | null | undefined; timeZone: string }) {
  if (!iso) return <Text size="sm">—</Text>;
  return (
    <Stack gap={0}>
      <Text size="sm">{formatInZone(iso, timeZone)}</Text>
      {timeZone !== VIEWER_TIME_ZONE && (
        <Text size="xs" c="dimmed">
          {formatInZone(iso, VIEWER_TIME_ZONE)} (you)
        </Text>
      )}
    </Stack>
  );
}
