import { Autocomplete, Button, Group, MultiSelect, NumberInput, Paper, Select, Stack, Switch, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/problem';
import { useHandlers } from '../../api/queries/list-handlers';
import { useQueues } from '../../api/queries/list-queues';
import type { CronFieldComponent } from '../../components/cron-field';
import { ErrorAlert } from '../../components/ErrorAlert';
import { PayloadEditor } from '../../components/PayloadEditor';
import { examplePayload, type JsonSchema } from '../../lib/json-schema';
import { useNotificationChannelNames } from './api/list-notification-channels';
import { validateScheduleForm, type ScheduleFormErrors, type ScheduleFormValues } from './schedule-form';
import { UpstreamEditor } from './UpstreamEditor';

export interface ScheduleFormProps {
  initial: ScheduleFormValues;
  CronField: CronFieldComponent;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (values: ScheduleFormValues) => void;
  /** Projects the schedule may be created in (creation only; an edit keeps its project). */
  projectChoices?: string[];
  /** The schedule being edited (absent when creating): it cannot be its own upstream. */
  scheduleId?: number;
}

export function ScheduleForm({ initial, CronField, submitLabel, pending, error, onSubmit, projectChoices, scheduleId }: ScheduleFormProps) {
  const handlers = useHandlers();
  const queues = useQueues();
  const channels = useNotificationChannelNames();
  const [v, setV] = useState(initial);
  const [submitted, setSubmitted] = useState(false);
  const schema = handlers.data?.find((h) => h.name === v.handler)?.payload_schema as JsonSchema | undefined;
  const local = validateScheduleForm(v, schema);
  const server = error instanceof ApiError ? error.fieldErrors : {};
  // Client errors appear after the first submit (or as the user fixes them); server errors until the next submit.
  const errors: ScheduleFormErrors = { ...server, ...(submitted ? local : {}) };
  const set = <K extends keyof ScheduleFormValues>(k: K, value: ScheduleFormValues[K]) => setV((prev) => ({ ...prev, [k]: value }));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    if (Object.keys(local).length === 0) onSubmit(v);
  };

  return (
    <form onSubmit={submit} aria-label={submitLabel} noValidate>
      <Stack maw={960}>
        <Paper withBorder p="md">
          <Stack>
            <Group grow align="flex-start">
              <TextInput label="Name" required value={v.name} onChange={(e) => set('name', e.currentTarget.value)} error={errors.name} />
              <Select
                label="Handler"
                required
                searchable
                data={(handlers.data ?? []).map((h) => h.name)}
                value={v.handler || null}
                onChange={(h) => {
                  const s = handlers.data?.find((x) => x.name === h)?.payload_schema as JsonSchema | undefined;
                  setV((prev) => ({ ...prev, handler: h ?? '', payload: prev.payload.trim() === '{}' || prev.payload.trim() === '' ? JSON.stringify(examplePayload(s), null, 2) : prev.payload }));
                }}
                error={errors.handler}
              />
            </Group>
            <Textarea label="Description" autosize minRows={1} value={v.description} onChange={(e) => set('description', e.currentTarget.value)} error={errors.description} />
            <PayloadEditor value={v.payload} onChange={(t) => set('payload', t)} schema={schema} errors={errors.payload ? [errors.payload] : []} />
          </Stack>
        </Paper>
        <Paper withBorder p="md">
          <Title order={2} size="h5" mb="sm">
            When
          </Title>
          <CronField
            expression={v.cron}
            timezone={v.timezone}
            onChange={({ expression, timezone }) => setV((prev) => ({ ...prev, cron: expression, timezone }))}
            error={errors.cron ?? errors.timezone ?? null}
          />
        </Paper>
        <Paper withBorder p="md">
          <Title order={2} size="h5" mb="sm">
            Execution
          </Title>
          <Group grow align="flex-start">
            <NumberInput label="Priority (−100…100)" value={v.priority} onChange={(n) => set('priority', n)} error={errors.priority} />
            <NumberInput label="Max attempts" min={1} value={v.max_attempts} onChange={(n) => set('max_attempts', n)} error={errors.max_attempts} />
            <NumberInput label="Timeout (seconds)" min={1} placeholder="handler default" value={v.timeout_seconds} onChange={(n) => set('timeout_seconds', n)} error={errors.timeout_seconds} />
          </Group>
          <Group grow align="flex-start" mt="sm">
            <Select
              label="Overlap"
              allowDeselect={false}
              data={[
                { value: 'forbid', label: 'Forbid: skip a run while one is running' },
                { value: 'allow', label: 'Allow concurrent runs' },
              ]}
              value={v.overlap}
              onChange={(o) => o && set('overlap', o as ScheduleFormValues['overlap'])}
              error={errors.overlap}
            />
            <Select
              label="Misfire"
              allowDeselect={false}
              data={[
                { value: 'skip', label: 'Skip missed runs' },
                { value: 'fire_once', label: 'Fire once for missed runs' },
              ]}
              value={v.misfire}
              onChange={(o) => o && set('misfire', o as ScheduleFormValues['misfire'])}
              error={errors.misfire}
            />
          </Group>
          <Group grow align="flex-start" mt="sm">
            {projectChoices ? (
              <Select label="Project" allowDeselect={false} data={projectChoices} value={v.project} onChange={(p) => p && set('project', p)} error={errors.project} />
            ) : (
              <TextInput label="Project" value={v.project} readOnly description="A schedule stays in its project" />
            )}
            <Autocomplete
              label="Queue"
              description="Its jobs go to this queue (a new name creates it)"
              data={[...new Set((queues.data ?? []).filter((q) => q.project === v.project).map((q) => q.name))]}
              value={v.queue}
              onChange={(q) => set('queue', q.trim())}
              error={errors.queue}
            />
          </Group>
          <Switch mt="md" label="Paused (do not fire until resumed)" checked={v.paused} onChange={(e) => set('paused', e.currentTarget.checked)} />
        </Paper>
        <Paper withBorder p="md" component="section" aria-label="Alerts">
          <Title order={2} size="h5" mb={4}>
            Alerts
          </Title>
          <Text size="xs" c="dimmed" mb="sm">
            The leader checks about once a second and notifies the channels below once when an alert starts and once when it clears. Empty fields are off.
          </Text>
          <Switch label="Alert when a run dies" checked={v.on_failure} onChange={(e) => set('on_failure', e.currentTarget.checked)} />
          <Group grow align="flex-start" mt="sm">
            <NumberInput label="After N runs in a row died" min={2} placeholder="off" value={v.consecutive_failures} onChange={(n) => set('consecutive_failures', n)} error={errors.consecutive_failures} />
            <NumberInput label="Late: not started within (s)" min={1} placeholder="off" value={v.max_lateness_seconds} onChange={(n) => set('max_lateness_seconds', n)} error={errors.max_lateness_seconds} />
          </Group>
          <Group grow align="flex-start" mt="sm">
            <NumberInput label="Runs longer than (s)" min={1} placeholder="off" value={v.max_runtime_seconds} onChange={(n) => set('max_runtime_seconds', n)} error={errors.max_runtime_seconds} />
            <NumberInput label="Silent: no success within (s)" min={1} placeholder="off" value={v.no_success_within_seconds} onChange={(n) => set('no_success_within_seconds', n)} error={errors.no_success_within_seconds} />
          </Group>
          <MultiSelect
            mt="sm"
            label="Notify channels"
            placeholder={channels.length ? 'choose channels' : 'no channels yet (Notifications page)'}
            data={Array.from(new Set([...channels, ...v.notify]))}
            value={v.notify}
            onChange={(names) => set('notify', names)}
            error={errors.notify}
            searchable
          />
        </Paper>
        <UpstreamEditor value={v.upstream} onChange={(rows) => set('upstream', rows)} project={v.project} selfId={scheduleId} error={errors.upstream} />
        <ErrorAlert error={error} hideFields />
        {submitted && Object.keys(local).length > 0 && (
          <Text c="red" size="sm" role="alert">
            Fix the highlighted fields.
          </Text>
        )}
        <Group>
          <Button type="submit" loading={pending}>
            {submitLabel}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
