import { Alert, Button, Group, Modal, NumberInput, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { ApiError } from '../../api/problem';
import type { Queue, QueueUpdate } from '../../api/types';
import { ProjectGatedButton } from '../../components/ProjectGatedButton';
import { useUpdateQueue } from './api/update-queue';

/** Pause with a reason (kept on the queue and in the audit trail), or resume. */
export function PauseQueueButton({ queue }: { queue: Queue }) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const update = useUpdateQueue();
  const label = `${queue.project}/${queue.name}`;
  const run = async (body: QueueUpdate) => {
    try {
      await update.mutateAsync({ project: queue.project, name: queue.name, body });
    } catch {
      return;
    }
    setOpen(false);
    setReason('');
  };
  if (queue.paused) {
    return (
      <ProjectGatedButton project={queue.project} operation="updateQueue" size="compact-sm" variant="light" color="green" aria-label={`Resume ${label}`} loading={update.isPending} onClick={() => void run({ paused: false })}>
        Resume
      </ProjectGatedButton>
    );
  }
  return (
    <>
      <ProjectGatedButton project={queue.project} operation="updateQueue" size="compact-sm" variant="light" color="yellow" aria-label={`Pause ${label}`} onClick={() => setOpen(true)}>
        Pause
      </ProjectGatedButton>
      <Modal opened={open} onClose={() => setOpen(false)} title={`Pause queue ${label}?`} centered>
        <Stack>
          <Text size="sm">
            Its jobs stay PENDING and no worker claims them; running jobs finish. Schedules keep enqueueing into it, so
            the backlog shows here.
          </Text>
          <TextInput label="Reason" description="Shown on the dashboard and kept in the audit trail" value={reason} onChange={(e) => setReason(e.currentTarget.value)} />
          {update.error && (
            <Alert color="red" title="Not paused">
              {update.error.message}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setOpen(false)}>
              Back
            </Button>
            <Button color="yellow" loading={update.isPending} onClick={() => void run({ paused: true, paused_reason: reason.trim() || null })}>
              Pause queue
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

type LimitName = 'concurrency_limit' | 'per_key_limit' | 'rate_limit_per_second';
const LIMITS: { name: LimitName; label: string; description: string; decimal: boolean }[] = [
  { name: 'concurrency_limit', label: 'Concurrency limit', description: 'RUNNING jobs of the queue, across every worker', decimal: false },
  { name: 'per_key_limit', label: 'Per-key limit', description: 'RUNNING jobs sharing one concurrency_key', decimal: false },
  { name: 'rate_limit_per_second', label: 'Starts per second', description: 'How many jobs may start each second', decimal: true },
];

const asNumber = (v: number | string): number | null => (v === '' || v == null ? null : Number(v));

/** The limits editor (ADMIN in the queue's project); empty = unlimited. */
export function QueueLimitsButton({ queue }: { queue: Queue }) {
  const [open, setOpen] = useState(false);
  const [values, setValues] = useState<Record<LimitName, number | string>>({ concurrency_limit: '', per_key_limit: '', rate_limit_per_second: '' });
  const update = useUpdateQueue();
  const fields = update.error instanceof ApiError ? update.error.fieldErrors : {};
  const label = `${queue.project}/${queue.name}`;
  const start = () => {
    update.reset();
    setValues({
      concurrency_limit: queue.concurrency_limit ?? '',
      per_key_limit: queue.per_key_limit ?? '',
      rate_limit_per_second: queue.rate_limit_per_second ?? '',
    });
    setOpen(true);
  };
  const save = async () => {
    const body: QueueUpdate = {};
    for (const { name } of LIMITS) body[name] = asNumber(values[name]);
    try {
      await update.mutateAsync({ project: queue.project, name: queue.name, body });
    } catch {
      return;
    }
    setOpen(false);
  };
  return (
    <>
      {/* Limits need ADMIN, more than updateQueue's OPERATOR (the server checks the fields). */}
      <ProjectGatedButton project={queue.project} requiredRole="ADMIN" size="compact-sm" variant="light" aria-label={`Edit limits of ${label}`} onClick={start}>
        Limits
      </ProjectGatedButton>
      <Modal opened={open} onClose={() => setOpen(false)} title={`Limits of ${label}`} centered>
        <Stack>
          <Text size="sm">The claim statement enforces them for every worker process at once. Empty means unlimited.</Text>
          {LIMITS.map((l) => (
            <NumberInput
              key={l.name}
              label={l.label}
              description={l.description}
              placeholder="unlimited"
              min={l.decimal ? 0.01 : 1}
              decimalScale={l.decimal ? 2 : 0}
              allowNegative={false}
              // No silent clamping: a 0 goes to the server, which says why it is not a limit.
              clampBehavior="none"
              value={values[l.name]}
              onChange={(v) => setValues((old) => ({ ...old, [l.name]: v }))}
              error={fields[l.name]}
            />
          ))}
          {update.error && !Object.keys(fields).length && (
            <Alert color="red" title="Not saved">
              {update.error.message}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setOpen(false)}>
              Back
            </Button>
            <Button loading={update.isPending} onClick={() => void save()}>
              Save limits
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
