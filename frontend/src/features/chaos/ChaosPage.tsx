import { Badge, Button, Code, Group, NumberInput, Paper, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/problem';
import { useChaosExperiments } from '../../api/queries/list-chaos-experiments';
import { useHandlers } from '../../api/queries/list-handlers';
import type { ChaosCreate } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { ErrorAlert } from '../../components/ErrorAlert';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { RequireRole } from '../../components/RequireRole';
import { roleFor } from '../../lib/roles';
import { useSession } from '../../lib/session';
import { useStartChaos } from './api/start-chaos';
import { useStopChaos } from './api/stop-chaos';

type Kind = ChaosCreate['kind'];
// What each kind does, in the words of management/chaos.py's parameter specs (review 2.12: the
// kinds were names only).
const KINDS: { value: Kind; label: string; what: string }[] = [
  { value: 'leader_stepdown', label: 'Leader step-down', what: 'The current leader resigns and may not take the lease back until the experiment ends; another process becomes leader.' },
  { value: 'freeze_heartbeats', label: 'Freeze heartbeats', what: 'Workers stop renewing their attempt leases, so the watchdog reclaims the attempts and they run again.' },
  { value: 'fail_handler', label: 'Fail a handler (fraction of runs)', what: "That fraction of the handler's attempts fail, so retries, backoff and dead letters show." },
  { value: 'handler_latency', label: 'Add handler latency', what: 'Each attempt of the handler is delayed by the given milliseconds before it runs.' },
  { value: 'kill_worker_thread', label: 'Kill a worker thread', what: 'One executor thread per process dies mid-attempt; its lease expires and the watchdog reclaims the attempt.' },
];

function StartForm() {
  const start = useStartChaos();
  const handlers = useHandlers();
  const [kind, setKind] = useState<Kind>('leader_stepdown');
  const [duration, setDuration] = useState<number | string>(60);
  const [handler, setHandler] = useState<string | null>(null);
  const [fraction, setFraction] = useState<number | string>(0.5);
  const [delay, setDelay] = useState<number | string>(500);
  const fields = start.error instanceof ApiError ? start.error.fieldErrors : {};
  const needsHandler = kind === 'fail_handler' || kind === 'handler_latency';
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const params =
      kind === 'fail_handler' ? { handler, fraction: Number(fraction) } : kind === 'handler_latency' ? { handler, delay_ms: Number(delay) } : {};
    start.mutate({ kind, duration_seconds: Number(duration), params });
  };
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h5" mb="sm">
        Start an experiment
      </Title>
      <form onSubmit={submit} aria-label="Start chaos experiment">
        <Stack>
          <Group align="flex-start">
            <Select label="Kind" allowDeselect={false} data={KINDS} value={kind} onChange={(k) => k && setKind(k as Kind)} w={280} error={fields.kind} />
            <NumberInput label="Duration (seconds, 1–600)" min={1} max={600} value={duration} onChange={setDuration} w={230} error={fields.duration_seconds} />
            {needsHandler && (
              <Select label="Handler" required data={(handlers.data ?? []).map((h) => h.name)} value={handler} onChange={setHandler} w={200} error={fields.params} />
            )}
            {kind === 'fail_handler' && <NumberInput label="Fraction of runs to fail (0–1)" min={0} max={1} step={0.1} decimalScale={2} value={fraction} onChange={setFraction} w={220} />}
            {kind === 'handler_latency' && <NumberInput label="Delay (ms)" min={0} value={delay} onChange={setDelay} w={160} />}
          </Group>
          <Text size="sm" aria-live="polite">
            {KINDS.find((k) => k.value === kind)?.what}
          </Text>
          <ErrorAlert error={start.error} hideFields />
          <Group>
            <Button type="submit" color="grape" loading={start.isPending} disabled={needsHandler && !handler}>
              Start experiment
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}

/** The first-run state: what an experiment shows, and that it is safe to try (it ends by itself). */
function NoExperiments() {
  const { can } = useSession();
  return (
    <>
      No experiments have run.{' '}
      {can(roleFor('startChaos'))
        ? 'Start one above — a leader step-down for 60 seconds is a safe first one — and watch the dashboard hand the lease over.'
        : `Someone with the ${roleFor('startChaos')} role can start one here to rehearse an outage.`}
    </>
  );
}

export function ChaosPage() {
  return (
    <RequireRole operation="listChaos" title="Chaos experiments">
      <ChaosExperiments />
    </RequireRole>
  );
}

function ChaosExperiments() {
  const experiments = useChaosExperiments(2000);
  const stop = useStopChaos();
  return (
    <Stack>
      <PageHeader title="Chaos experiments" />
      <Text size="sm" c="dimmed">
        Experiments are bounded and expire by themselves; stopping one ends it early.
      </Text>
      <StartForm />
      <QueryState isPending={experiments.isPending} onRetry={() => experiments.refetch()} error={experiments.error} isEmpty={experiments.data?.length === 0} empty={<NoExperiments />}>
        <Table striped withTableBorder fz="sm" aria-label="Experiments">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Kind</Table.Th>
              <Table.Th>Params</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Started</Table.Th>
              <Table.Th>Expires / ended</Table.Th>
              <Table.Th>By</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(experiments.data ?? []).map((c) => (
              <Table.Tr key={c.id}>
                <Table.Td>{c.kind}</Table.Td>
                <Table.Td>
                  <Code>{JSON.stringify(c.params ?? {})}</Code>
                </Table.Td>
                <Table.Td>{c.ended_at ? <Badge color="gray">{c.end_reason ?? 'ended'}</Badge> : <Badge color="grape">active</Badge>}</Table.Td>
                <Table.Td>
                  <RelativeTime iso={c.started_at} />
                </Table.Td>
                <Table.Td>
                  <RelativeTime iso={c.ended_at ?? c.expires_at} />
                </Table.Td>
                <Table.Td>{c.created_by ?? '—'}</Table.Td>
                <Table.Td>
                  {!c.ended_at && (
                    <ConfirmButton
                      operation="stopChaos"
                      size="compact-sm"
                      color="red"
                      variant="light"
                      title={`Stop ${c.kind}?`}
                      message="The experiment ends now."
                      confirmLabel="Stop experiment"
                      onConfirm={() => stop.mutateAsync(c.id)}
                    >
                      Stop
                    </ConfirmButton>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </QueryState>
    </Stack>
  );
}
