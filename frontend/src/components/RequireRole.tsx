import { Alert } from '@mantine/core';
import type { ReactNode } from 'react';
import { neededRoleText, roleFor, type GatedOperation } from '../lib/roles';
import { useSession } from '../lib/session';

/** Page-level gate: a deep link to a page the role may not see says why instead of a wall of 403s.
 * ``operation`` is the API call the page is about; its required role gates the page. */
export function RequireRole({ operation, children }: { operation: GatedOperation; children: ReactNode }) {
  const { can } = useSession();
  const role = roleFor(operation);
  if (!can(role)) {
    return (
      <Alert color="yellow" title="Not available for your role" role="alert">
        {neededRoleText(role)}.
      </Alert>
    );
  }
  return <>{children}</>;
}
