import { Anchor, Badge, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { QueryState } from '../../components/QueryState';
import { useScheduleChain, type ChainLink, type ScheduleChain } from './api/get-schedule-chain';
import type { FireEntry } from './api/list-schedule-fires';
import { OUTCOMES } from './FireTimeline';
import { ScheduleTime } from './ScheduleTimes';

/** The generated type allows an empty object for a null nested entry; only a real entry has an outcome. */
function fireOf(value: ChainLink['last_fire'] | ScheduleChain['last_fire']): FireEntry | null {
  return value && 'outcome' in value ? (value as FireEntry) : null;
}

function LastFire({ fire, timeZone }: { fire: FireEntry | null; timeZone: string }) {
  if (!fire) return <Text size="xs" c="dimmed">No fire yet</Text>;
  const outcome = OUTCOMES[fire.outcome];
  return (
    <Stack gap={2} data-testid="chain-last-fire" data-outcome={fire.outcome}>
      <Group gap={6}>
        <Badge color={outcome.color} variant="light">
          {fire.outcome}
        </Badge>
        {fire.job_id && (
          <Anchor component={Link} to={`/jobs/${fire.job_id}`} size="xs">
            job #{fire.job_id} {fire.job_status}
          </Anchor>
        )}
      </Group>
      <Group gap={4}>
        <Text size="xs" c="dimmed">
          fire of
        </Text>
        <ScheduleTime iso={fire.fire_time} timeZone={timeZone} />
      </Group>
      {fire.reason && (
        <Text size="xs" c="dimmed" data-testid="chain-reason">
          {fire.reason}
        </Text>
      )}
    </Stack>
  );
}

function LinkCard({ link, timeZone, side }: { link: ChainLink; timeZone: string; side: 'upstream' | 'downstream' }) {
  return (
    <Paper withBorder p="xs" role="listitem" aria-label={`${side} ${link.name}`}>
      <Group gap={6} mb={4}>
        <Anchor component={Link} to={`/schedules/${link.id}`} fw={600}>
          {link.name}
        </Anchor>
        <Text size="xs" c="dimmed">
          #{link.id}
        </Text>
        {link.paused && <Badge color="yellow" variant="light">paused</Badge>}
        {link.deleted && <Badge color="gray" variant="light">deleted</Badge>}
      </Group>
      {side === 'upstream' && (
        <Text size="xs" mb={4}>
          waits for it to {link.run_when === 'finished' ? 'finish (any end)' : 'succeed'}
          {link.wait_seconds ? `, at most ${link.wait_seconds} s` : ', until the next fire'}
        </Text>
      )}
      <LastFire fire={fireOf(link.last_fire)} timeZone={timeZone} />
    </Paper>
  );
}

function Side({ title, links, side, timeZone, empty }: { title: string; links: ChainLink[]; side: 'upstream' | 'downstream'; timeZone: string; empty: string }) {
  return (
    <Stack gap="xs">
      <Text fw={600} size="sm">
        {title}
      </Text>
      {links.length === 0 ? (
        <Text size="sm" c="dimmed">
          {empty}
        </Text>
      ) : (
        <Stack gap="xs" role="list" aria-label={title}>
          {links.map((l) => (
            <LinkCard key={l.id} link={l} side={side} timeZone={timeZone} />
          ))}
        </Stack>
      )}
    </Stack>
  );
}

/** A schedule's place in its chain: what its fires wait on, and what waits on them, each with its latest fire
 * (the fire time it is keyed to, its outcome and why). Shown only for a schedule that is part of a chain. */
export function ChainPanel({ id, timeZone, linked }: { id: number; timeZone: string; linked: boolean }) {
  const chain = useScheduleChain(id, linked);
  if (!linked) return null;
  const c = chain.data;
  return (
    <Paper withBorder p="md" component="section" aria-label="Schedule chain">
      <Title order={2} size="h4" mb={4}>
        Chain
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        A fire waits for each upstream schedule&apos;s latest fire at or before its own fire time; it is skipped if that fire failed, made no job, or did not finish in time.
      </Text>
      <QueryState isPending={chain.isPending} onRetry={() => chain.refetch()} error={chain.error}>
        {c && (
          <SimpleGrid cols={{ base: 1, md: 3 }}>
            <Side title="Upstream (waits on)" links={c.upstream} side="upstream" timeZone={timeZone} empty="None: its fires start the chain." />
            <Stack gap="xs">
              <Text fw={600} size="sm">
                This schedule
              </Text>
              <Paper withBorder p="xs" bg="var(--mantine-color-default-hover)">
                <Text fw={600} mb={4}>
                  {c.name}
                </Text>
                <LastFire fire={fireOf(c.last_fire)} timeZone={timeZone} />
              </Paper>
            </Stack>
            <Side title="Downstream (waits on it)" links={c.downstream} side="downstream" timeZone={timeZone} empty="None: nothing waits on it." />
          </SimpleGrid>
        )}
      </QueryState>
    </Paper>
  );
}
