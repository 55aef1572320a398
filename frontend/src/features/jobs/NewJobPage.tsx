import { Autocomplete, Button, Group, NumberInput, Paper, Select, Stack, Text, TextInput } from '@mantine/core';
import { useMemo, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { ApiError } from '../../api/problem';
import { useHandlers } from '../../api/queries/list-handlers';
import { useQueues } from '../../api/queries/list-queues';
import { useProjectScope } from '../../lib/project-scope';
import { ErrorAlert } from '../../components/ErrorAlert';
import { PageHeader } from '../../components/PageHeader';
import { PayloadEditor } from '../../components/PayloadEditor';
import { RequireRole } from '../../components/RequireRole';
import { LocalDateTimeInput } from '../../components/LocalDateTimeInput';
import { checkPayloadText, examplePayload, type JsonSchema } from '../../lib/json-schema';
import { useCreateJob } from './api/create-job';
import { newIdempotencyKey } from '../../lib/idempotency-key';

export function NewJobPage() {
  return (
    <RequireRole operation="createJob" title="New ad-hoc job">
      <PageHeader title="New ad-hoc job" />
      <NewJobForm />
    </RequireRole>
  );
}

export function NewJobForm({ onCreated }: { onCreated?: (id: number) => void }) {
  const navigate = useNavigate();
  const handlers = useHandlers();
  const create = useCreateJob();
  const [handler, setHandler] = useState<string | null>(null);
  const [payload, setPayload] = useState('{}');
  const [priority, setPriority] = useState<number | string>(0);
  const [maxAttempts, setMaxAttempts] = useState<number | string>('');
  const [timeout, setTimeoutSeconds] = useState<number | string>('');
  const [runAt, setRunAt] = useState('');
  const scope = useProjectScope();
  const queues = useQueues();
  const projectChoices = scope.projects.filter((p) => (p.role === 'OPERATOR' || p.role === 'ADMIN') && !p.archived).map((p) => p.slug);
  const [project, setProject] = useState<string>(() => scope.project ?? (projectChoices.includes('default') ? 'default' : (projectChoices[0] ?? 'default')));
  const [queue, setQueue] = useState('default');
  const [concurrencyKey, setConcurrencyKey] = useState('');
  const [touched, setTouched] = useState(false);
  // One key per intent to submit: a double click or a retried request makes one job, not two.
  const [idempotencyKey, setIdempotencyKey] = useState(() => newIdempotencyKey());

  const selected = handlers.data?.find((h) => h.name === handler);
  const schema = selected?.payload_schema as JsonSchema | undefined;
  const payloadCheck = useMemo(() => checkPayloadText(payload, schema), [payload, schema]);
  const serverFields = create.error instanceof ApiError ? create.error.fieldErrors : {};

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (!handler || payloadCheck.errors.length > 0) return;
    create.mutate(
      {
        idempotencyKey,
        body: {
          handler,
          payload: payloadCheck.value as Record<string, unknown>,
          priority: Number(priority) || 0,
          project,
          queue: queue.trim() || 'default',
          ...(concurrencyKey.trim() && { concurrency_key: concurrencyKey.trim() }),
          ...(maxAttempts !== '' && { max_attempts: Number(maxAttempts) }),
          ...(timeout !== '' && { timeout_seconds: Number(timeout) }),
          ...(runAt && { run_at: new Date(runAt).toISOString() }),
        },
      },
      {
        onSuccess: (job) => {
          setIdempotencyKey(newIdempotencyKey());
          if (onCreated) onCreated(job.id);
          else navigate(`/jobs/${job.id}`);
        },
      },
    );
  };

  return (
    <Paper withBorder p="md" maw={720}>
      <form onSubmit={submit} aria-label="New ad-hoc job" noValidate>
        <Stack>
          <Select
            label="Handler"
            required
            searchable
            data={(handlers.data ?? []).map((h) => ({ value: h.name, label: h.name }))}
            value={handler}
            onChange={(v) => {
              setHandler(v);
              const h = handlers.data?.find((x) => x.name === v);
              setPayload(JSON.stringify(examplePayload(h?.payload_schema as JsonSchema | undefined), null, 2));
            }}
            error={(touched && !handler ? 'Choose a handler' : undefined) ?? serverFields.handler}
            nothingFoundMessage={handlers.isPending ? 'Loading…' : 'No handlers'}
          />
          {selected?.description && (
            <Text size="sm" c="dimmed">
              {selected.description}
            </Text>
          )}
          <PayloadEditor
            value={payload}
            onChange={setPayload}
            schema={schema}
            errors={payloadCheck.errors.length ? payloadCheck.errors : serverFields.payload ? [serverFields.payload] : []}
          />
          <Group grow>
            <NumberInput label="Priority (−100…100)" min={-100} max={100} value={priority} onChange={setPriority} error={serverFields.priority} />
            <NumberInput label="Max attempts" min={1} placeholder="default" value={maxAttempts} onChange={setMaxAttempts} error={serverFields.max_attempts} />
            <NumberInput label="Timeout (seconds)" min={1} placeholder={selected?.default_timeout_seconds ? String(selected.default_timeout_seconds) : 'default'} value={timeout} onChange={setTimeoutSeconds} error={serverFields.timeout_seconds} />
          </Group>
          <Group grow align="flex-start">
            <Select
              label="Project"
              allowDeselect={false}
              data={[...new Set([project, ...projectChoices])]}
              value={project}
              onChange={(p) => p && setProject(p)}
              error={serverFields.project}
            />
            <Autocomplete
              label="Queue"
              description="A new name creates the queue"
              data={[...new Set((queues.data ?? []).filter((q) => q.project === project).map((q) => q.name))]}
              value={queue}
              onChange={setQueue}
              error={serverFields.queue}
            />
            <TextInput
              label="Concurrency key (optional)"
              description="Jobs sharing it count against the queue's per-key limit together"
              value={concurrencyKey}
              onChange={(e) => setConcurrencyKey(e.currentTarget.value)}
              error={serverFields.concurrency_key}
            />
          </Group>
          <LocalDateTimeInput label="Run at (your local time; empty = now)" value={runAt} onChange={setRunAt} error={serverFields.run_at} w={300} />
          <ErrorAlert error={create.error} hideFields />
          <Group>
            <Button type="submit" loading={create.isPending}>
              Create job
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}
