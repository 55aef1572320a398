import { Anchor } from '@mantine/core';
import { Link } from 'react-router';
import { roleFor, type GatedOperation } from '../lib/roles';
import { useSession } from '../lib/session';

/** A list's first-run empty state: what to do first (for a role that may do it) and where the
 * API is documented, instead of a bare "No jobs yet." (review 2.12). */
export function FirstStep({ text, action, to, operation }: { text: string; action: string; to: string; operation: GatedOperation }) {
  const { can } = useSession();
  const allowed = can(roleFor(operation));
  return (
    <>
      <span>{text}</span>{' '}
      {allowed && (
        <>
          <Anchor component={Link} to={to}>
            {action}
          </Anchor>{' '}
          or{' '}
        </>
      )}
      {/* Without the action the sentence starts here. */}
      {allowed ? 'read' : 'Read'} the API at <Anchor href="/api/docs">/api/docs</Anchor>.
    </>
  );
}
