import { Box, Group, Paper, Stack, Text, Title, Tooltip, UnstyledButton } from '@mantine/core';
import { useState, type CSSProperties } from 'react';
import { Link } from 'react-router';
import { QueryState } from '../../components/QueryState';
import { useScheduleFires, type FireEntry, type FireOutcome } from './api/list-schedule-fires';
import { ScheduleTime } from './ScheduleTimes';
import { fireResult, RESULTS, resultCounts, type FireResult } from './fire-result';
import { formatLag, formatLocal, viewerTimeZone } from '../../lib/time';

// What the ledger says of each fire time (the chain panel's badges); the timeline draws each fire
// by its result instead (fire-result.ts), so a dead run is red.
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

function summary(entry: FireEntry): string {
  const result = RESULTS[fireResult(entry)];
  const what = entry.outcome === 'enqueued' ? `ran: ${result.label}` : result.label;
  const job = entry.job_id ? ` · job #${entry.job_id}` : '';
  const lag = entry.lag_ms !== null && entry.lag_ms !== undefined ? ` · started ${formatLag(entry.lag_ms)} late` : '';
  return `${formatLocal(entry.fire_time)} · ${what}${job}${lag}${entry.reason ? ` — ${entry.reason}` : ''}`;
}

/** One fire time's tile: its colour and its shape both say the result (see fire-result.ts). */
function Tile({ result, selected }: { result: FireResult; selected?: boolean }) {
  const look = RESULTS[result];
  return (
    <span
      className="cp-fire"
      data-shape={look.shape}
      data-selected={selected || undefined}
      style={{ '--fire-color': `var(--mantine-color-${look.color}-7)` } as CSSProperties}
      aria-hidden="true"
    />
  );
}

export function FireTimeline({ id, timeZone }: { id: number; timeZone: string }) {
  const fires = useScheduleFires(id);
  const [selected, setSelected] = useState<string | null>(null);
  const items = fires.data?.items ?? [];
  const chosen = items.find((e) => e.fire_time === selected) ?? null;
  const counts = resultCounts(items);

  return (
    <Paper withBorder p="md" component="section" aria-label="Fire timeline">
      <Title order={2} size="h4" mb={4}>Fire timeline</Title>
      <Text size="sm" c="dimmed" mb="sm">
        The last {items.length || 100} fire times, oldest first, each shown by what became of it. Hover or select one for when (your time, {viewerTimeZone()}) and why.
      </Text>
      <QueryState isPending={fires.isPending} onRetry={() => fires.refetch()} error={fires.error} isEmpty={items.length === 0} empty="No fire time has come yet since this schedule was created.">
        <Stack gap="sm">
          <Group gap={2} wrap="wrap" role="list" aria-label="Fire times">
            {items.map((entry) => (
              <Tooltip key={entry.fire_time} label={summary(entry)} multiline maw={360} openDelay={100} position="bottom">
                <UnstyledButton
                  role="listitem"
                  aria-label={summary(entry)}
                  data-outcome={entry.outcome}
                  data-result={fireResult(entry)}
                  data-fire-time={entry.fire_time}
                  onClick={() => setSelected(entry.fire_time)}
                  className="cp-fire-button"
                >
                  <Tile result={fireResult(entry)} selected={entry.fire_time === selected} />
                </UnstyledButton>
              </Tooltip>
            ))}
          </Group>
          <Group gap="md" aria-label="Outcome counts" role="list">
            {counts.map(([result, n]) => (
              <Group key={result} gap={6} wrap="nowrap" role="listitem" data-result-count={result}>
                <Tile result={result} />
                <Text size="sm">
                  {RESULTS[result].label}: <b>{n}</b>
                </Text>
              </Group>
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
                  {chosen.lag_ms !== null && chosen.lag_ms !== undefined && ` · started ${formatLag(chosen.lag_ms)} after its fire time`}
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
