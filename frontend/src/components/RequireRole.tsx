import { Alert } from '@mantine/core';
import type { ReactNode } from 'react';
import { isInstanceOperation, mayCall, neededRoleText, roleFor, type GatedOperation } from '../lib/roles';
import { useSession } from '../lib/session';

/** Page-level gate: a deep link to a page the role may not see says why instead of a wall of 403s.
 * ``operation`` is the API call the page is about; its required role gates the page (for an
 * installation operation, the user's own role: a project ADMIN is no ADMIN of users). */
export function RequireRole({ operation, children }: { operation: GatedOperation; children: ReactNode }) {
  const { user, can } = useSession();
  const role = roleFor(operation);
  if (!mayCall(operation, user?.role, can)) {
    return (
      <Alert color="yellow" title="Not available for your role" role="alert">
        {neededRoleText(role)}
        {isInstanceOperation(operation) ? ' of the installation (a role in a project is not enough)' : ''}.
      </Alert>
    );
  }
  return <>{children}</>;
}
