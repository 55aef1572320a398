import { Anchor, Paper, SimpleGrid, Text } from '@mantine/core';
import { Link } from 'react-router';
import { JOB_STATUSES } from '../../api/types';

export function StatusCounts({ counts }: { counts: Record<string, number> }) {
  return (
    <SimpleGrid cols={{ base: 2, sm: 5 }}>
      {JOB_STATUSES.map((s) => (
        <Paper key={s} withBorder p="sm">
          <Anchor component={Link} to={`/jobs?status=${s}`} size="xs" c="dimmed" tt="uppercase">
            {s}
          </Anchor>
          <Text size="xl" fw={700} aria-label={`${s} jobs`}>
            {counts[s] ?? 0}
          </Text>
        </Paper>
      ))}
    </SimpleGrid>
  );
}
