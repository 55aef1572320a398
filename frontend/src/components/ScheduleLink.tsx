import { Anchor, Badge, Group } from '@mantine/core';
import { Link } from 'react-router';

/** A job's schedule by name (the API gives it with the job), linked, with DELETED when it is. */
export function ScheduleLink({ id, name, deleted }: { id: number | null | undefined; name?: string | null; deleted?: boolean | null }) {
  if (!id) return <>—</>;
  return (
    <Group gap={6} wrap="nowrap" component="span" display="inline-flex">
      <Anchor component={Link} to={`/schedules/${id}`}>
        {name ?? `#${id}`}
      </Anchor>
      {deleted && (
        <Badge size="sm" color="gray" variant="outline">
          deleted
        </Badge>
      )}
    </Group>
  );
}
