import { REQUIRED_ROLE, type OperationId } from '../api/required-roles';
import type { Role } from '../api/types';

const RANK: Record<Role, number> = { VIEWER: 0, OPERATOR: 1, ADMIN: 2 };

/** Roles are ordered VIEWER < OPERATOR < ADMIN; a role may do what every lower role may. */
export function roleAtLeast(role: Role | undefined | null, needed: Role): boolean {
  return role != null && RANK[role] >= RANK[needed];
}

export function neededRoleText(needed: Role): string {
  return needed === 'ADMIN' ? 'Requires the ADMIN role' : `Requires the ${needed} role or higher`;
}

/** An API operation that needs a signed-in role (not a public one such as login). */
export type GatedOperation = {
  [K in OperationId]: (typeof REQUIRED_ROLE)[K] extends 'PUBLIC' ? never : K;
}[OperationId];

/** The role the server demands for ``operation`` (its ``x-required-role``): the console's gates
 * read it here instead of spelling roles out, so they cannot drift from the API. */
export function roleFor(operation: GatedOperation): Role {
  return REQUIRED_ROLE[operation] as Role;
}
