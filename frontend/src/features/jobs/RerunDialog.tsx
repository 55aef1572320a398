import { Alert, Button, Code, Group, Modal, NumberInput, Stack, Table, Text, TextInput } from '@mantine/core';
import { useMemo, useState } from 'react';
import { useNavigate } from 'react-router';
import { ApiError } from '../../api/problem';
import { useHandlers } from '../../api/queries/list-handlers';
import type { Job } from '../../api/types';
import { GatedButton } from '../../components/GatedButton';
import { PayloadEditor } from '../../components/PayloadEditor';
import { checkPayloadText, type JsonSchema } from '../../lib/json-schema';
import { useRerunJob } from './api/rerun-job';
import { payloadDiff } from './payload-diff';

const show = (v: unknown) => (v === undefined ? '(absent)' : JSON.stringify(v));

/** "Rerun…": the payload editor pre-filled with this job's payload, the diff shown before sending. */
export function RerunDialog({ job }: { job: Job }) {
  const navigate = useNavigate();
  const handlers = useHandlers();
  const [open, setOpen] = useState(false);
  const [text, setText] = useState(() => JSON.stringify(job.payload, null, 2));
  const [priority, setPriority] = useState<string | number>(job.priority);
  const [queue, setQueue] = useState(job.queue);
  const rerun = useRerunJob();
  const schema = handlers.data?.find((h) => h.name === job.handler)?.payload_schema as JsonSchema | undefined;
  const check = useMemo(() => checkPayloadText(text, schema), [text, schema]);
  const edited = check.errors.length === 0 ? (check.value as Record<string, unknown>) : null;
  const diff = edited ? payloadDiff(job.payload, edited) : [];
  const serverFields = rerun.error instanceof ApiError ? rerun.error.fieldErrors : {};
  const submit = async () => {
    if (!edited) return;
    try {
      const created = await rerun.mutateAsync({ id: job.id, payload: edited, priority: typeof priority === 'number' ? priority : job.priority, queue: queue.trim() || job.queue });
      setOpen(false);
      navigate(`/jobs/${created.id}`);
    } catch {
      /* shown below from rerun.error */
    }
  };
  return (
    <>
      <GatedButton operation="rerunJob" variant="default" onClick={() => setOpen(true)}>
        Rerun…
      </GatedButton>
      <Modal opened={open} onClose={() => setOpen(false)} title={`Rerun job #${job.id}`} centered size="lg">
        <Stack>
          <Text size="sm">A new job (trigger “rerun”) runs <Code>{job.handler}</Code> with this payload; job #{job.id} is left as it is.</Text>
          <PayloadEditor value={text} onChange={setText} schema={schema} errors={check.errors.length ? check.errors : serverFields.payload ? [serverFields.payload] : []} />
          <Group grow>
            <NumberInput label="Priority (−100…100)" min={-100} max={100} value={priority} onChange={setPriority} error={serverFields.priority} />
            <TextInput label="Queue" value={queue} onChange={(e) => setQueue(e.currentTarget.value)} error={serverFields.queue} />
          </Group>
          <div>
            <Text size="sm" fw={500}>Changes to the payload</Text>
            {diff.length === 0 ? (
              <Text size="sm" c="dimmed" data-testid="rerun-diff">None: the same payload.</Text>
            ) : (
              <Table fz="xs" aria-label="Payload changes" data-testid="rerun-diff">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Key</Table.Th>
                    <Table.Th>Before</Table.Th>
                    <Table.Th>After</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {diff.map(([key, before, after]) => (
                    <Table.Tr key={key}>
                      <Table.Td><Code>{key}</Code></Table.Td>
                      <Table.Td c="red">{show(before)}</Table.Td>
                      <Table.Td c="green">{show(after)}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
          </div>
          {rerun.error && (
            <Alert color="red" title="Not rerun">
              {rerun.error.message}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setOpen(false)}>
              Back
            </Button>
            <Button disabled={!edited} loading={rerun.isPending} onClick={() => void submit()}>
              Rerun as a new job
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
