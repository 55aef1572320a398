import { Alert } from '@mantine/core';
import type { ReactNode } from 'react';
import { isInstanceOperation, mayCall, neededRoleText, roleFor, type GatedOperation } from '../lib/roles';
import { useSession } from '../lib/session';
import { PageHeader } from './PageHeader';

/** Page-level gate: a deep link to a page the role may not see says why instead of a wall of 403s.
 * ``operation`` is the API call the page is about; its required role gates the page (for an
 * installation operation, the user's own role: a project ADMIN is no ADMIN of users). ``title``
 * names the page: a refused page keeps its h1 and its tab title ("Users · cronplane"), not a bare
 * alert under "cronplane" (review 2026-12-05 §5.15, axe's page-has-heading-one). */
export function RequireRole({ operation, title, children }: { operation: GatedOperation; title: string; children: ReactNode }) {
  const { user, can } = useSession();
  const role = roleFor(operation);
  if (!mayCall(operation, user?.role, can)) {
    return (
      <>
        <PageHeader title={title} />
        <Alert color="yellow" title="Not available for your role" role="alert">
          {neededRoleText(role)}
          {isInstanceOperation(operation) ? ' of the installation (a role in a project is not enough)' : ''}.
        </Alert>
      </>
    );
  }
  return <>{children}</>;
}
