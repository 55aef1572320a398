import { Anchor, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import type { JobDetail } from '../../api/types';
import { StatusBadge } from '../../components/StatusBadge';
import { formatUtc } from '../../lib/time';

type JobLink = JobDetail['depends_on'][number];

function LinkCard({ link, side }: { link: JobLink; side: 'upstream' | 'downstream' }) {
  return (
    <Paper withBorder p="xs" role="listitem" aria-label={`${side} job ${link.id}`}>
      <Group gap={6}>
        <Anchor component={Link} to={`/jobs/${link.id}`} fw={600}>
          #{link.id}
        </Anchor>
        <StatusBadge status={link.status} />
        <Text size="xs" c="dimmed">
          {link.handler}
        </Text>
      </Group>
      {link.schedule_id && (
        <Text size="xs" mt={2} data-testid="keyed-fire">
          <Anchor component={Link} to={`/schedules/${link.schedule_id}`} size="xs">
            {link.schedule_name ?? `schedule #${link.schedule_id}`}
          </Anchor>
          {link.fire_time && ` · fire of ${formatUtc(link.fire_time)}`}
        </Text>
      )}
    </Paper>
  );
}

function Side({ title, links, side }: { title: string; links: JobLink[]; side: 'upstream' | 'downstream' }) {
  return (
    <Stack gap="xs">
      <Text fw={600} size="sm">
        {title}
      </Text>
      {links.length === 0 ? (
        <Text size="sm" c="dimmed">
          None
        </Text>
      ) : (
        <Stack gap="xs" role="list" aria-label={title}>
          {links.map((l) => (
            <LinkCard key={l.id} link={l} side={side} />
          ))}
        </Stack>
      )}
    </Stack>
  );
}

/** The job's dependency chain: the jobs it waits on and those waiting on it, with their states and, for scheduled
 * jobs (a schedule chain), the schedule and fire time each is keyed to. Nothing for a job without dependencies. */
export function DependencyChain({ job }: { job: JobDetail }) {
  if (job.depends_on.length === 0 && job.dependents.length === 0) return null;
  return (
    <Paper withBorder p="md" component="section" aria-label="Dependency chain">
      <Title order={2} size="h5" mb="xs">
        Chain
      </Title>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Side title="Waits on" links={job.depends_on} side="upstream" />
        <Stack gap="xs">
          <Text fw={600} size="sm">
            This job
          </Text>
          <Paper withBorder p="xs" bg="var(--mantine-color-default-hover)">
            <Group gap={6}>
              <Text fw={600}>#{job.id}</Text>
              <StatusBadge status={job.status} />
            </Group>
            {job.fire_time && (
              <Text size="xs" mt={2}>
                fire of {formatUtc(job.fire_time)}
              </Text>
            )}
          </Paper>
        </Stack>
        <Side title="Waited on by" links={job.dependents} side="downstream" />
      </SimpleGrid>
    </Paper>
  );
}
