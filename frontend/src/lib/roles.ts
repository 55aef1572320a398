import type { Role } from '../api/types';

const RANK: Record<Role, number> = { VIEWER: 0, OPERATOR: 1, ADMIN: 2 };

/** Roles are ordered VIEWER < OPERATOR < ADMIN; a role may do what every lower role may. */
export function roleAtLeast(role: Role | undefined | null, needed: Role): boolean {
  return role != null && RANK[role] >= RANK[needed];
}

export function neededRoleText(needed: Role): string {
  return needed === 'ADMIN' ? 'Requires the ADMIN role' : `Requires the ${needed} role or higher`;
}
