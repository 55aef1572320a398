import { Alert, Anchor, Badge, Code, Grid, Group, Paper, Stack, Table, Text, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useMemo } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useJobs } from '../../api/queries/list-jobs';
import type { Job } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { CursorPager } from '../../components/CursorPager';
import { DataTable } from '../../components/DataTable';
import { errorHeadline } from '../../components/FailureText';
import { GatedButton } from '../../components/GatedButton';
import { JsonBlock } from '../../components/JsonBlock';
import { PageHeader } from '../../components/PageHeader';
import { PollingPicker } from '../../components/PollingPicker';
import { usePolling } from '../../lib/polling';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { ScheduleStateBadge, scheduleState } from '../../components/ScheduleHealth';
import { StatusBadge } from '../../components/StatusBadge';
import { describeCron } from '../../lib/cron-english';
import { formatDuration } from '../../lib/time';
import { useUrlPaging } from '../../lib/search-params';
import { useDeleteSchedule } from './api/delete-schedule';
import { useSchedule } from './api/get-schedule';
import { BackfillDialog } from './BackfillDialog';
import { ChainPanel } from './ChainPanel';
import { FireTimeline } from './FireTimeline';
import { HealthPanel } from './HealthPanel';
import { PauseDialog } from './PauseDialog';
import { VersionHistory } from './VersionHistory';
import { useResumeSchedule } from './api/resume-schedule';
import { useTriggerSchedule } from './api/trigger-schedule';
import { ScheduleTime } from './ScheduleTimes';

/**
 * The schedule's next run, written ahead of its fire time by the leader (docs/adr/0043): PENDING,
 * never attempted, fired by the schedule, for the fire time the server answers as the schedule's
 * next run (the next fire not come yet by the database's clock). Decided from the server's answers
 * only, so the browser's clock never makes a late run read as a next one: once its time has come
 * the schedule's next run moves on and the row is a PENDING run like any other.
 */
export function isNextRun(job: Job, nextRunAt: string | null | undefined): boolean {
  return (
    job.status === 'PENDING' &&
    job.attempt_count === 0 &&
    job.trigger === 'schedule' &&
    !!job.fire_time &&
    !!nextRunAt &&
    Date.parse(job.fire_time) === Date.parse(nextRunAt)
  );
}

function runColumns(nextRunAt: string | null | undefined): ColumnDef<Job, unknown>[] {
  return [
    {
      header: 'Job',
      cell: ({ row }) => (
        <Anchor component={Link} to={`/jobs/${row.original.id}`}>
          #{row.original.id}
        </Anchor>
      ),
    },
    {
      header: 'Status',
      cell: ({ row }) =>
        isNextRun(row.original, nextRunAt) ? (
          <Badge color="gray" variant="light" title="Scheduled: written ahead, it starts at its run time">
            Next run
          </Badge>
        ) : (
          <StatusBadge status={row.original.status} />
        ),
    },
    { header: 'Trigger', accessorKey: 'trigger' },
    { header: 'Run at', cell: ({ row }) => <RelativeTime iso={row.original.run_at} /> },
    { header: 'Finished', cell: ({ row }) => <RelativeTime iso={row.original.finished_at} /> },
    { header: 'Duration', cell: ({ row }) => runDuration(row.original) },
    { header: 'Attempts', cell: ({ row }) => `${row.original.attempt_count} / ${row.original.max_attempts}` },
    // The headline only, as in the jobs list: the traceback is on the job's page (a truncated
    // error ran the headline into "File …" of the first frame).
    {
      header: 'Error',
      cell: ({ row }) => {
        const headline = row.original.error ? errorHeadline(row.original.error) : '';
        return <Text size="xs" lineClamp={2} maw={320} title={headline}>{headline}</Text>;
      },
    },
  ];
}

/** How long a run took, from its first start to its finish (retries and their waits included);
 * "running" while it runs, "—" before it starts. */
function runDuration(job: Job): string {
  if (!job.started_at) return '—';
  if (!job.finished_at) return job.status === 'RUNNING' ? 'running' : '—';
  return formatDuration(new Date(job.finished_at).getTime() - new Date(job.started_at).getTime());
}

export function ScheduleDetailPage() {
  const id = Number(useParams().id);
  const navigate = useNavigate();
  const polling = usePolling(5000);
  const schedule = useSchedule(id, true, polling.refetchInterval);
  const paging = useUrlPaging('runs_');
  const cursor = paging.cursor;
  const deleted = Boolean(schedule.data?.deleted_at);
  const runs = useJobs({ schedule_id: id, cursor: cursor ?? undefined }, deleted ? false : polling.refetchInterval);
  const resume = useResumeSchedule();
  const remove = useDeleteSchedule();
  const trigger = useTriggerSchedule();
  const s = schedule.data;
  const columns = useMemo(() => runColumns(s?.next_run_at), [s?.next_run_at]);
  const live = s && !s.deleted_at;

  return (
    <Stack>
      <PageHeader title={s ? s.name : `Schedule #${id}`}>
        {!deleted && <PollingPicker choice={polling.choice} onChange={polling.setChoice} visible={polling.visible} failing={Boolean(schedule.error) && Boolean(schedule.data)} updatedAt={schedule.dataUpdatedAt} />}
        {live && (
          <>
            <ConfirmButton
              operation="triggerSchedule"
              color="blue"
              title={`Run ${s.name} now?`}
              message="Starts one ad-hoc run of this definition now, outside its schedule."
              confirmLabel="Run now"
              onConfirm={async () => {
                const job = await trigger.mutateAsync({ id });
                navigate(`/jobs/${job.id}`);
              }}
            >
              Run now
            </ConfirmButton>
            <GatedButton operation="updateSchedule" variant="default" onClick={() => navigate(`/schedules/${id}/edit`)}>
              Edit
            </GatedButton>
            {s.paused ? (
              <ConfirmButton operation="resumeSchedule" color="green" variant="light" title={`Resume ${s.name}?`} message="It fires again from its next fire time." confirmLabel="Resume" onConfirm={() => resume.mutateAsync(id)}>
                Resume
              </ConfirmButton>
            ) : (
              <PauseDialog id={id} name={s.name} />
            )}
            <BackfillDialog id={id} name={s.name} />
            <ConfirmButton
              operation="deleteSchedule"
              color="red"
              variant="light"
              title={`Delete ${s.name}?`}
              message="It never fires again. Its run history stays readable."
              confirmLabel="Delete"
              onConfirm={async () => {
                await remove.mutateAsync(id);
                navigate('/schedules');
              }}
            >
              Delete
            </ConfirmButton>
          </>
        )}
      </PageHeader>
      <QueryState isPending={schedule.isPending} onRetry={() => schedule.refetch()} error={schedule.error}>
        {s && (
          <Grid>
            <Grid.Col span={{ base: 12, md: 6 }}>
              <Paper withBorder p="md">
                {s.deleted_at && (
                  <Alert color="gray" mb="sm">
                    Deleted <RelativeTime iso={s.deleted_at} />.
                  </Alert>
                )}
                <Table variant="vertical" fz="sm" aria-label="Schedule fields">
                  <Table.Tbody>
                    <Row label="State">
                      {/* Runs of the first page are the newest; on later pages the state is the server's or unknown. */}
                      <ScheduleStateBadge state={scheduleState(s, cursor ? undefined : runs.data?.items)} />
                      {s.paused && s.paused_until && (
                        <Text size="sm" data-testid="paused-until">
                          resumes by itself <RelativeTime iso={s.paused_until} />
                        </Text>
                      )}
                      {s.paused && s.pause_reason && <Text size="sm" c="dimmed">{s.pause_reason}</Text>}
                    </Row>
                    <Row label="Handler"><Code>{s.handler}</Code></Row>
                    <Row label="Project">{s.project}</Row>
                    <Row label="Queue">{s.queue}</Row>
                    <Row label="Cron">
                      <Code>{s.cron}</Code>
                      <Text size="sm">{describeCron(s.cron)}</Text>
                    </Row>
                    <Row label="Time zone">{s.timezone}</Row>
                    <Row label="Next run">{s.paused ? '— (paused)' : <ScheduleTime iso={s.next_run_at} timeZone={s.timezone} />}</Row>
                    <Row label="Last run"><ScheduleTime iso={s.last_run_at} timeZone={s.timezone} /></Row>
                    <Row label="Priority">{s.priority}</Row>
                    <Row label="Max attempts">{s.max_attempts}</Row>
                    <Row label="Timeout">{s.timeout_seconds ? `${s.timeout_seconds} s` : 'handler default'}</Row>
                    <Row label="Overlap">{s.overlap}</Row>
                    <Row label="Misfire">{s.misfire}</Row>
                    {(s.missed_count !== undefined || s.overlap_skipped_count !== undefined) && (
                      <Row label="Skipped fires">
                        {s.missed_count ?? 0} missed (misfire policy), {s.overlap_skipped_count ?? 0} while a run was still going (overlap)
                      </Row>
                    )}
                    <Row label="Version">{s.version}</Row>
                    <Row label="Updated"><RelativeTime iso={s.updated_at} /></Row>
                  </Table.Tbody>
                </Table>
                {s.description && <Text mt="sm">{s.description}</Text>}
              </Paper>
            </Grid.Col>
            <Grid.Col span={{ base: 12, md: 6 }}>
              <Stack>
                <HealthPanel id={id} />
                <Paper withBorder p="md">
                  <Title order={2} size="h5" mb="xs">Payload</Title>
                  <JsonBlock value={s.payload} label="Payload" />
                </Paper>
              </Stack>
            </Grid.Col>
          </Grid>
        )}
      </QueryState>
      {/* The runs right below the definition and health, the version history folded at the
          bottom: the runs are what a reader of a schedule looks for (review 2026-12-05 §5.6). */}
      <Paper withBorder p="md" component="section" aria-label="Run history">
        <Group justify="space-between" mb="sm">
          <Title order={2} size="h4">Run history</Title>
          <Anchor component={Link} to={`/jobs?schedule_id=${id}`} size="sm">
            Open in Jobs (filters, search)
          </Anchor>
        </Group>
        <QueryState isPending={runs.isPending} onRetry={() => runs.refetch()} error={runs.error} isEmpty={runs.data?.items.length === 0} empty="This schedule has not run yet.">
          <DataTable data={runs.data?.items ?? []} columns={columns} label="Runs" loading={runs.isPlaceholderData} />
        </QueryState>
        <CursorPager paging={paging} nextCursor={runs.data?.next_cursor} />
      </Paper>
      {s && <ChainPanel id={id} timeZone={s.timezone} linked={s.upstream.length > 0 || s.downstream.length > 0} />}
      {s && <FireTimeline id={id} timeZone={s.timezone} />}
      {s && <VersionHistory id={id} current={s.version} live={!s.deleted_at} />}
    </Stack>
  );
}

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th w={130}>{label}</Table.Th>
      <Table.Td>{children}</Table.Td>
    </Table.Tr>
  );
}
