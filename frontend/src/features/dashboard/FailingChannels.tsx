import { Alert, Anchor, List, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { FailingChannel } from '../../api/types';
import { RelativeTime } from '../../components/RelativeTime';

/** A channel whose newest deliveries all failed: every alert sent to it is lost, which the dashboard must say before anything
 * else (a broken Slack hook was silent for a day in the review, issue 45). Names and counts only; every member reads the
 * channels' health on the Notifications page, their ADMINs the URL and errors. */
export function FailingChannels({ channels, canOpen }: { channels: FailingChannel[]; canOpen: boolean }) {
  const title = channels.length === 1 ? 'A notification channel is failing' : `${channels.length} notification channels are failing`;
  // The link takes the alert's text colour (underlined, bold): the theme's link blue on the red
  // tint is below 4.5:1.
  return (
    <Alert color="red" title={title} role="alert" data-testid="failing-channels">
      <Text size="sm">Alerts sent to {channels.length === 1 ? 'it' : 'them'} reach nobody.</Text>
      <List size="sm" mt={4}>
        {channels.map((c) => (
          <List.Item key={c.id}>
            <strong>{c.name}</strong> ({c.kind}, project {c.project}): {c.failures_in_a_row >= 200 ? '200+' : c.failures_in_a_row} delivery attempts failed in a row,
            last success {c.last_success_at ? <RelativeTime iso={c.last_success_at} /> : 'never'}
          </List.Item>
        ))}
      </List>
      {canOpen && (
        <Text size="sm" mt={4}>
          <Anchor component={Link} to="/notifications" underline="always" fw={600} c="inherit">
            Check the channels
          </Anchor>
        </Text>
      )}
    </Alert>
  );
}
