import { Badge } from '@mantine/core';

const COLORS: Record<string, string> = {
  WAITING: 'violet',
  PENDING: 'gray',
  RUNNING: 'blue',
  SUCCEEDED: 'green',
  DEAD: 'red',
  CANCELLED: 'yellow',
  FAILED: 'red',
  TIMED_OUT: 'orange',
  LOST: 'grape',
  INTERRUPTED: 'cyan',
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={COLORS[status] ?? 'gray'} variant="light">
      {status}
    </Badge>
  );
}
