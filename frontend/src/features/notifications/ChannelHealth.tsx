import { Badge, Stack, Text } from '@mantine/core';
import type { ChannelHealth } from '../../api/types';
import { RelativeTime } from '../../components/RelativeTime';

/** FAILING (its newest attempts all failed: nobody hears the alerts), OK, or unused; with the
 * last success and the failures since, which say how long alerts have been lost. */
export function ChannelHealthCell({ health }: { health: ChannelHealth }) {
  const color = health.state === 'failing' ? 'red' : health.state === 'ok' ? 'green' : 'gray';
  const label = health.state === 'failing' ? 'FAILING' : health.state === 'ok' ? 'OK' : 'NO DELIVERIES';
  return (
    <Stack gap={2}>
      <Badge color={color} variant={health.state === 'failing' ? 'filled' : 'light'} data-channel-state={health.state}>
        {label}
      </Badge>
      {health.state !== 'unused' && (
        <Text size="xs">
          {health.failures_in_a_row > 0 && <>{health.failures_in_a_row >= 200 ? '200+' : health.failures_in_a_row} failed in a row · </>}
          last success {health.last_success_at ? <RelativeTime iso={health.last_success_at} /> : 'never'}
        </Text>
      )}
      {health.state === 'failing' && health.last_error && (
        <Text size="xs" lineClamp={1} title={health.last_error}>
          Last error: {health.last_error}
        </Text>
      )}
    </Stack>
  );
}
