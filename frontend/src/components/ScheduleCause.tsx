import { Anchor, Text } from '@mantine/core';
import { Link } from 'react-router';
import { useQueues } from '../api/queries/list-queues';
import { formatLocal } from '../lib/time';
import { queueHref, scheduleCauses, type Cause } from './schedule-cause';

type ScheduleLike = Parameters<typeof scheduleCauses>[0];

function CauseText({ cause }: { cause: Cause }) {
  if (cause.kind === 'paused')
    return (
      <span data-cause="paused">
        Paused{cause.until ? ` until ${formatLocal(cause.until)}` : ''}
        {cause.reason ? `: ${cause.reason}` : ''}
      </span>
    );
  if (cause.kind === 'queue-paused')
    return (
      <span data-cause="queue-paused">
        Queue{' '}
        <Anchor component={Link} to={queueHref(cause.project, cause.queue)} underline="always" inherit>
          {cause.queue}
        </Anchor>{' '}
        is paused{cause.reason ? `: ${cause.reason}` : ''}
      </span>
    );
  return (
    <span data-cause="error" className="cp-cause-error">
      {cause.headline}
    </span>
  );
}

/** A schedule's causes in one line (a list cell; the full text in its title) or as a few lines. */
export function ScheduleCause({ schedule, inline = true }: { schedule: ScheduleLike; inline?: boolean }) {
  // Every queue in one cached answer (the Queues page's), shared by every row.
  const queues = useQueues();
  const causes = scheduleCauses(schedule, queues.data);
  if (causes.length === 0) return inline ? <span>—</span> : null;
  const title = causes
    .map((c) =>
      c.kind === 'error'
        ? c.headline
        : c.kind === 'paused'
          ? `Paused${c.until ? ` until ${formatLocal(c.until)}` : ''}${c.reason ? `: ${c.reason}` : ''}`
          : `Queue ${c.queue} is paused${c.reason ? `: ${c.reason}` : ''}`,
    )
    .join(' · ');
  return (
    <Text span inherit title={inline ? title : undefined} className={inline ? 'cp-cause' : undefined} data-testid="schedule-cause">
      {causes.map((c, i) => (
        <span key={c.kind}>
          {i > 0 && ' · '}
          <CauseText cause={c} />
        </span>
      ))}
    </Text>
  );
}
