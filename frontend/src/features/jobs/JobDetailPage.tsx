import { Anchor, Badge, Code, Grid, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { Link, useParams } from 'react-router';
import { CancellableJobStatus, RetryableJobStatus } from '../../api/rules';
import { ConfirmButton } from '../../components/ConfirmButton';
import { FailureText } from '../../components/FailureText';
import { JsonBlock } from '../../components/JsonBlock';
import { ScheduleLink } from '../../components/ScheduleLink';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { formatUtc } from '../../lib/time';
import { useCancelJob } from './api/cancel-job';
import { useJob } from './api/get-job';
import { useRetryJob } from './api/retry-job';
import { AttemptTimeline, attemptCountText } from './AttemptTimeline';
import { DependencyChain } from './DependencyChain';
import { OutputTail } from './OutputTail';
import { RerunDialog } from './RerunDialog';

export function JobDetailPage() {
  const id = Number(useParams().id);
  const job = useJob(id);
  const cancel = useCancelJob();
  const retry = useRetryJob();
  const j = job.data;
  return (
    <Stack>
      <PageHeader title={`Job #${id}`}>
        {j && <RerunDialog key={j.id} job={j} />}
        {j && CancellableJobStatus.some((s) => s === j.status) && (
          <ConfirmButton
            operation="cancelJob"
            color="red"
            variant="light"
            title={`Cancel job #${id}?`}
            message={j.status === 'RUNNING' ? 'The running attempt is asked to stop; the job becomes CANCELLED when it ends.' : 'The job will not run.'}
            confirmLabel="Cancel job"
            disabled={j.cancel_requested}
            onConfirm={() => cancel.mutateAsync(id)}
          >
            {j.cancel_requested ? 'Cancel requested' : 'Cancel'}
          </ConfirmButton>
        )}
        {j && RetryableJobStatus.some((s) => s === j.status) && (
          <ConfirmButton
            operation="retryJob"
            color="blue"
            title={`Retry job #${id}?`}
            message="The job goes back to PENDING with one more attempt allowed."
            confirmLabel="Retry job"
            onConfirm={() => retry.mutateAsync(id)}
          >
            Retry
          </ConfirmButton>
        )}
      </PageHeader>
      <QueryState isPending={job.isPending} onRetry={() => job.refetch()} error={job.error}>
        {j && (
          <Grid>
            <Grid.Col span={{ base: 12, md: 5 }}>
              <Paper withBorder p="md">
                <Table variant="vertical" fz="sm" aria-label="Job fields">
                  <Table.Tbody>
                    <Row label="Status">
                      <StatusBadge status={j.status} /> {j.cancel_requested && <Badge color="yellow">cancel requested</Badge>}
                    </Row>
                    <Row label="Handler">
                      <Code>{j.handler}</Code>
                    </Row>
                    <Row label="Project">{j.project}</Row>
                    <Row label="Queue">
                      {j.queue}
                      {j.concurrency_key ? ` (key ${j.concurrency_key})` : ''}
                    </Row>
                    <Row label="Trigger">
                      {j.trigger}
                      {j.rerun_of && (
                        <>
                          {' of '}
                          <Anchor component={Link} to={`/jobs/${j.rerun_of}`}>
                            #{j.rerun_of}
                          </Anchor>
                        </>
                      )}
                    </Row>
                    <Row label="Schedule">
                      <ScheduleLink id={j.schedule_id} name={j.schedule_name} deleted={j.schedule_deleted} />
                      {j.schedule_id && j.schedule_version ? ` (version ${j.schedule_version})` : ''}
                    </Row>
                    {j.batch_id && (
                      <Row label="Batch">
                        <Anchor component={Link} to={`/batches/${j.batch_id}`}>
                          #{j.batch_id}
                        </Anchor>
                      </Row>
                    )}
                    <Row label="Priority">{j.priority}</Row>
                    <Row label="Attempts">
                      {attemptCountText(j.attempt_count, j.max_attempts, j.attempts)}
                    </Row>
                    <Row label="Timeout">{j.timeout_seconds ? `${j.timeout_seconds} s` : 'handler default'}</Row>
                    <Row label="Requested by">{j.requested_by ?? '—'}</Row>
                    <Row label="Idempotency key">{j.idempotency_key ? <Code>{j.idempotency_key}</Code> : '—'}</Row>
                    <Row label="Trace">
                      {j.trace_id && j.trace_url ? (
                        <Anchor href={j.trace_url} target="_blank" rel="noreferrer" ff="monospace">
                          {j.trace_id}
                        </Anchor>
                      ) : j.trace_id ? (
                        <Code>{j.trace_id}</Code>
                      ) : (
                        '—'
                      )}
                    </Row>
                    <Row label="Created">
                      <RelativeTime iso={j.created_at} /> <Text span size="xs" c="dimmed">{formatUtc(j.created_at)}</Text>
                    </Row>
                    <Row label="Run at">
                      <RelativeTime iso={j.run_at} />
                    </Row>
                    <Row label="Started">
                      <RelativeTime iso={j.started_at} />
                    </Row>
                    <Row label="Finished">
                      <RelativeTime iso={j.finished_at} />
                    </Row>
                  </Table.Tbody>
                </Table>
              </Paper>
            </Grid.Col>
            <Grid.Col span={{ base: 12, md: 7 }}>
              <Stack>
                <DependencyChain job={j} />
                <OutputTail jobId={j.id} attempts={j.attempts} />
                <Section title="Payload">
                  <JsonBlock value={j.payload} label="Payload" />
                </Section>
                {j.error && (
                  <Section title="Error">
                    <FailureText error={j.error} />
                  </Section>
                )}
                {/* A job that died, was cancelled or has not finished has no result: a card saying
                    "null" read as data (re-walk 2026-12-02); its failure above is what happened. */}
                {j.result !== null && j.result !== undefined && (
                  <Section title="Result">
                    <JsonBlock value={j.result} label="Result" />
                  </Section>
                )}
                <Section title="Attempt timeline">
                  <AttemptTimeline attempts={j.attempts} jobError={j.error} />
                </Section>
              </Stack>
            </Grid.Col>
          </Grid>
        )}
      </QueryState>
    </Stack>
  );
}

/** One titled card of the page's right-hand column. */
function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h5" mb="xs">
        {title}
      </Title>
      {children}
    </Paper>
  );
}

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th w={140}>{label}</Table.Th>
      <Table.Td>{children}</Table.Td>
    </Table.Tr>
  );
}
