import { Alert } from '@mantine/core';
import type { ReactNode } from 'react';
import type { Role } from '../api/types';
import { neededRoleText } from '../lib/roles';
import { useSession } from '../lib/session';

/** Page-level gate: a deep link to a page the role may not see says why instead of a wall of 403s. */
export function RequireRole({ role, children }: { role: Role; children: ReactNode }) {
  const { can } = useSession();
  if (!can(role)) {
    return (
      <Alert color="yellow" title="Not available for your role" role="alert">
        {neededRoleText(role)}.
      </Alert>
    );
  }
  return <>{children}</>;
}
