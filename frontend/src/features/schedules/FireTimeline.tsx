import { Badge, Box, Group, Paper, Stack, Text, Title, Tooltip, UnstyledButton } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import { UnsuccessfulJobStatus } from '../../api/rules';
import { QueryState } from '../../components/QueryState';
import { useScheduleFires, type FireEntry, type FireOutcome } from './api/list-schedule-fires';
import { ScheduleTime } from './ScheduleTimes';

// One colour per outcome; a skip is never green, so a strip of skips cannot look healthy.
export const OUTCOMES: Record<FireOutcome, { color: string; label: string }> = {
  enqueued: { color: 'green', label: 'ran (job enqueued)' },
  waiting_upstream: { color: 'cyan', label: 'waiting for its upstream schedule' },
  skipped_upstream: { color: 'pink', label: 'skipped: upstream fire failed or made no job' },
  pending: { color: 'blue', label: 'due, not enqueued yet' },
  skipped_paused: { color: 'yellow', label: 'skipped: paused' },
  skipped_overlap: { color: 'orange', label: 'skipped: previous run still going' },
  skipped_misfire: { color: 'red', label: 'skipped: scheduler was down (misfire)' },
  skipped_quota: { color: 'orange', label: 'skipped: project over its pending-job quota' },
  deleted: { color: 'gray', label: 'schedule deleted' },
  missing: { color: 'grape', label: 'unexplained (a bug: please report)' },
};

// A run that finished without succeeding is enqueued but not fine: show it red-bordered in the strip.
const BAD_JOB = new Set<string>(UnsuccessfulJobStatus);

function summary(entry: FireEntry): string {
  const what = OUTCOMES[entry.outcome].label;
  const job = entry.job_id ? ` · job #${entry.job_id} ${entry.job_status ?? ''}` : '';
  const lag = entry.lag_ms !== null && entry.lag_ms !== undefined ? ` · started ${entry.lag_ms} ms late` : '';
  return `${entry.fire_time}: ${what}${job}${lag}${entry.reason ? ` — ${entry.reason}` : ''}`;
}

export function FireTimeline({ id, timeZone }: { id: number; timeZone: string }) {
  const fires = useScheduleFires(id);
  const [selected, setSelected] = useState<string | null>(null);
  const items = fires.data?.items ?? [];
  const chosen = items.find((e) => e.fire_time === selected) ?? null;
  const counts = items.reduce<Partial<Record<FireOutcome, number>>>((acc, e) => {
    acc[e.outcome] = (acc[e.outcome] ?? 0) + 1;
    return acc;
  }, {});

  return (
    <Paper withBorder p="md" component="section" aria-label="Fire timeline">
      <Title order={2} size="h4" mb={4}>Fire timeline</Title>
      <Text size="sm" c="dimmed" mb="sm">
        Every fire time of the last {items.length || 100}, oldest first. Hover or select one to see why it ran or did not.
      </Text>
      <QueryState isPending={fires.isPending} onRetry={() => fires.refetch()} error={fires.error} isEmpty={items.length === 0} empty="No fire time has come yet since this schedule was created.">
        <Stack gap="sm">
          <Group gap={2} wrap="wrap" role="list" aria-label="Fire times">
            {items.map((entry) => (
              <Tooltip key={entry.fire_time} label={summary(entry)} multiline maw={360} openDelay={100}>
                <UnstyledButton
                  role="listitem"
                  aria-label={summary(entry)}
                  data-outcome={entry.outcome}
                  data-fire-time={entry.fire_time}
                  onClick={() => setSelected(entry.fire_time)}
                >
                  <Box
                    w={10}
                    h={22}
                    bg={`${OUTCOMES[entry.outcome].color}.6`}
                    style={{
                      borderRadius: 2,
                      outline: entry.fire_time === selected ? '2px solid var(--mantine-color-dark-6)' : undefined,
                      border: entry.job_status && BAD_JOB.has(entry.job_status) ? '2px solid var(--mantine-color-red-9)' : undefined,
                    }}
                  />
                </UnstyledButton>
              </Tooltip>
            ))}
          </Group>
          <Group gap="xs" aria-label="Outcome counts">
            {(Object.keys(OUTCOMES) as FireOutcome[])
              .filter((o) => counts[o])
              .map((o) => (
                <Badge key={o} color={OUTCOMES[o].color} variant="light">
                  {OUTCOMES[o].label}: {counts[o]}
                </Badge>
              ))}
          </Group>
          {chosen && (
            <Paper withBorder p="sm" data-testid="fire-explanation">
              <Box fw={600}>
                <ScheduleTime iso={chosen.fire_time} timeZone={timeZone} />
              </Box>
              <Text size="sm">{OUTCOMES[chosen.outcome].label}</Text>
              {chosen.job_id && (
                <Text size="sm">
                  <Link to={`/jobs/${chosen.job_id}`}>Job #{chosen.job_id}</Link> · {chosen.job_status}
                  {chosen.lag_ms !== null && chosen.lag_ms !== undefined && ` · started ${chosen.lag_ms} ms after its fire time`}
                </Text>
              )}
              {chosen.reason && <Text size="sm" c="dimmed" data-testid="fire-reason">{chosen.reason}</Text>}
            </Paper>
          )}
        </Stack>
      </QueryState>
    </Paper>
  );
}
