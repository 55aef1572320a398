import { Alert, Badge, Button, Code, Group, MultiSelect, Paper, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/problem';
import type { NotificationChannel, NotificationChannelCreate, NotificationChannelCreated } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { ErrorAlert } from '../../components/ErrorAlert';
import { GatedButton } from '../../components/GatedButton';
import { PageHeader } from '../../components/PageHeader';
import { PollingPicker } from '../../components/PollingPicker';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { RequireRole } from '../../components/RequireRole';
import { usePolling } from '../../lib/polling';
import { isReadOnly, mayCall } from '../../lib/roles';
import { useSession } from '../../lib/session';
import { useCreateChannel } from './api/create-channel';
import { useDeleteChannel } from './api/delete-channel';
import { useChannels } from './api/list-channels';
import { ChannelHealthCell } from './ChannelHealth';
import { useDeliveries } from './api/list-deliveries';
import { useTestChannel } from './api/test-channel';

type Kind = NotificationChannelCreate['kind'];
type EventName = NonNullable<NotificationChannelCreate['events']>[number];

// The server's default subscription; job.succeeded is opt-in.
const DEFAULT_EVENTS: EventName[] = ['job.dead', 'schedule.failing', 'schedule.late', 'schedule.silent', 'schedule.recovered'];
const ALL_EVENTS: EventName[] = [...DEFAULT_EVENTS, 'job.succeeded'];
const KINDS: { value: Kind; label: string }[] = [
  { value: 'webhook', label: 'Webhook (Standard Webhooks, signed)' },
  { value: 'slack', label: 'Slack incoming webhook' },
  { value: 'email', label: 'Email (SMTP)' },
];

function CreateChannelForm({ onCreated }: { onCreated: (c: NotificationChannelCreated) => void }) {
  const create = useCreateChannel();
  const [name, setName] = useState('');
  const [kind, setKind] = useState<Kind>('webhook');
  const [target, setTarget] = useState('');
  const [events, setEvents] = useState<EventName[]>(DEFAULT_EVENTS);
  const fields = create.error instanceof ApiError ? create.error.fieldErrors : {};
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const body: NotificationChannelCreate = { name, kind, events, ...(kind === 'email' ? { address: target } : { url: target }) };
    create.mutate(body, {
      onSuccess: (channel) => {
        setName('');
        setTarget('');
        onCreated(channel);
      },
    });
  };
  return (
    <Paper withBorder p="md" component="form" onSubmit={submit} aria-label="New channel">
      <Title order={2} size="h5" mb="sm">
        New channel
      </Title>
      <Stack>
        <Group grow align="flex-start">
          <TextInput label="Name" required description="lower case; a schedule's notify names it" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fields.name} />
          <Select label="Kind" allowDeselect={false} data={KINDS} value={kind} onChange={(k) => k && setKind(k as Kind)} error={fields.kind} />
        </Group>
        <TextInput
          label={kind === 'email' ? 'Address' : 'URL'}
          required
          placeholder={kind === 'email' ? 'oncall@example.com' : 'https://…'}
          value={target}
          onChange={(e) => setTarget(e.currentTarget.value)}
          error={kind === 'email' ? fields.address : fields.url}
        />
        <MultiSelect label="Events" data={ALL_EVENTS} value={events} onChange={(v) => setEvents(v as EventName[])} error={fields.events} />
        <ErrorAlert error={create.error} hideFields />
        <Group>
          <Button type="submit" loading={create.isPending}>
            Create channel
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}

function DeliveryLog({ channel }: { channel: NotificationChannel }) {
  // A live list like Jobs: the same pause control, so a reader can hold the log still (review 2.7).
  const polling = usePolling(2000);
  const deliveries = useDeliveries(channel.id, polling.refetchInterval);
  return (
    <Paper withBorder p="md" component="section" aria-label={`Deliveries to ${channel.name}`}>
      <Group justify="space-between" wrap="wrap" mb="sm">
        <Title order={2} size="h5">
          Deliveries to {channel.name}
        </Title>
        <PollingPicker
          choice={polling.choice}
          onChange={polling.setChoice}
          visible={polling.visible}
          failing={Boolean(deliveries.error) && Boolean(deliveries.data)}
          updatedAt={deliveries.dataUpdatedAt}
        />
      </Group>
      <QueryState isPending={deliveries.isPending} error={deliveries.data ? null : deliveries.error} onRetry={() => deliveries.refetch()} isEmpty={deliveries.data?.items.length === 0} empty="Nothing sent yet.">
        <Table.ScrollContainer type="native" minWidth={640} tabIndex={0} aria-label="Delivery log (scrollable)">
          <Table fz="sm" aria-label="Delivery log">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>Event</Table.Th>
                <Table.Th>Attempt</Table.Th>
                <Table.Th>Response</Table.Th>
                <Table.Th>webhook-id</Table.Th>
                <Table.Th>Error</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {deliveries.data?.items.map((d) => {
                const ok = d.status_code !== null && d.status_code !== undefined && d.status_code >= 200 && d.status_code < 300;
                return (
                  <Table.Tr key={d.id} data-status-code={d.status_code ?? ''}>
                    <Table.Td>
                      <RelativeTime iso={d.at} />
                    </Table.Td>
                    <Table.Td>{d.event_type}</Table.Td>
                    <Table.Td>{d.attempt}</Table.Td>
                    <Table.Td>
                      <Badge variant="outline" color={ok || d.status_code === 250 ? 'green' : 'red'}>
                        {d.status_code ?? 'no answer'}
                      </Badge>
                    </Table.Td>
                    <Table.Td>
                      <Code>{d.webhook_id}</Code>
                    </Table.Td>
                    <Table.Td maw={320}>
                      <Text size="sm" lineClamp={2}>
                        {d.error ?? '—'}
                      </Text>
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
    </Paper>
  );
}

/** Where a channel sends: its ADMINs' to read (a Slack or webhook URL is a credential); everyone
 * else gets no url or address at all. */
function SendsTo({ channel }: { channel: NotificationChannel }) {
  if (channel.url === undefined && channel.address === undefined) {
    return (
      <Text size="sm" c="dimmed" title="Only the project's ADMINs see where a channel sends">
        —
      </Text>
    );
  }
  const target = channel.url ?? channel.address ?? '';
  return (
    <Text size="sm" truncate="end" title={target}>
      {target}
    </Text>
  );
}

/** Every member sees the channels of their projects and whether each works (review 2026-12-05
 * §5.15: a VIEWER could not tell whether alerting worked at all); the configuration, the
 * delivery log and the actions are the ADMINs'. */
export function NotificationsPage() {
  const { user, can } = useSession();
  const channels = useChannels();
  const readOnly = isReadOnly(can);
  const mayCreate = mayCall('createNotificationChannel', user?.role, can);
  // A column of dashes says nothing: shown when some channel listed is one the user administers.
  const showsTargets = channels.data?.items.some((c) => c.url !== undefined || c.address !== undefined) ?? false;
  const test = useTestChannel();
  const remove = useDeleteChannel();
  const [selected, setSelected] = useState<number | null>(null);
  const [created, setCreated] = useState<NotificationChannelCreated | null>(null);
  const current = channels.data?.items.find((c) => c.id === selected) ?? null;
  return (
    <RequireRole operation="listNotificationChannels" title="Notifications">
      <Stack>
        <PageHeader title="Notifications" />
        <Text size="sm" c="dimmed">
          Where alerts (schedule.failing, late, silent, recovered) and job events go. A schedule sends its alerts to the channels its Notify field names.
          {!mayCreate && " Where a channel sends, its delivery log and its errors are for the project's ADMINs."}
        </Text>
        {created?.secret && (
          <Alert color="blue" title={`Signing secret of ${created.name}`} withCloseButton onClose={() => setCreated(null)}>
            <Text size="sm">Shown once. Receivers verify the webhook-signature header with it (see docs/notifications.md).</Text>
            <Code block>{created.secret}</Code>
          </Alert>
        )}
        <Paper withBorder p="md" component="section" aria-label="Channels">
          <QueryState isPending={channels.isPending} error={channels.data ? null : channels.error} onRetry={() => channels.refetch()} isEmpty={channels.data?.items.length === 0} empty="No channels yet.">
            {/* Native: the focusable box is the one that scrolls (in Mantine's ScrollArea an inner
                viewport scrolls, which a viewer's rows, without links or buttons, left unreachable
                by keyboard on a phone: axe's scrollable-region-focusable). */}
            <Table.ScrollContainer type="native" minWidth={720} tabIndex={0} aria-label="Notification channels (scrollable)">
              <Table fz="sm" aria-label="Notification channels">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>Project</Table.Th>
                    <Table.Th>Kind</Table.Th>
                    <Table.Th>Health</Table.Th>
                    {showsTargets && <Table.Th>Sends to</Table.Th>}
                    <Table.Th>Events</Table.Th>
                    {!readOnly && <Table.Th>Actions</Table.Th>}
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {channels.data?.items.map((c) => (
                    <Table.Tr key={c.id} data-channel={c.name}>
                      <Table.Td>{c.name}</Table.Td>
                      <Table.Td>{c.project}</Table.Td>
                      <Table.Td>{c.kind}</Table.Td>
                      <Table.Td maw={260}>
                        <ChannelHealthCell health={c.health} />
                      </Table.Td>
                      {showsTargets && (
                        <Table.Td maw={280}>
                          <SendsTo channel={c} />
                        </Table.Td>
                      )}
                      <Table.Td>
                        <Text size="xs">{c.events.join(', ')}</Text>
                      </Table.Td>
                      {!readOnly && (
                        <Table.Td>
                          <Group gap="xs" wrap="nowrap">
                            <GatedButton
                              operation="testNotificationChannel"
                              size="xs"
                              variant="default"
                              aria-label={`Send a test to ${c.name}`}
                              loading={test.isPending && test.variables === c.id}
                              onClick={() => {
                                setSelected(c.id);
                                test.mutate(c.id);
                              }}
                            >
                              Test
                            </GatedButton>
                            <GatedButton
                              operation="listNotificationDeliveries"
                              size="xs"
                              variant="default"
                              aria-label={`Deliveries to ${c.name}`}
                              onClick={() => setSelected(c.id)}
                            >
                              Deliveries
                            </GatedButton>
                            <ConfirmButton
                              operation="deleteNotificationChannel"
                              size="xs"
                              color="red"
                              variant="light"
                              title={`Delete ${c.name}?`}
                              message="Its delivery log goes with it; schedules naming it stop notifying it."
                              confirmLabel="Delete"
                              onConfirm={() => remove.mutateAsync(c.id).then(() => selected === c.id && setSelected(null))}
                            >
                              Delete
                            </ConfirmButton>
                          </Group>
                        </Table.Td>
                      )}
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          </QueryState>
          <ErrorAlert error={test.error} />
        </Paper>
        {current && <DeliveryLog channel={current} />}
        {mayCreate && <CreateChannelForm onCreated={setCreated} />}
      </Stack>
    </RequireRole>
  );
}
