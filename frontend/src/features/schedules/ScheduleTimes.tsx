import { Stack, Text } from '@mantine/core';
import { formatAt, viewerTimeZone } from '../../lib/time';

/** A fire time in the schedule's zone, and in the viewer's when that differs. */
export function ScheduleTime({ iso, timeZone }: { iso: string | null | undefined; timeZone: string }) {
  if (!iso) return <Text size="sm">—</Text>;
  return (
    <Stack gap={0}>
      <Text size="sm">{formatAt(iso, timeZone)}</Text>
      {timeZone !== viewerTimeZone() && (
        <Text size="xs" c="dimmed">
          {formatAt(iso, viewerTimeZone())} (you)
        </Text>
      )}
    </Stack>
  );
}
