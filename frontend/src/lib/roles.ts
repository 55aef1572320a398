import { INSTANCE_OPERATIONS, REQUIRED_ROLE, type OperationId } from '../api/required-roles';
import type { Role } from '../api/types';

const RANK: Record<Role, number> = { VIEWER: 0, OPERATOR: 1, ADMIN: 2 };

/** Roles are ordered VIEWER < OPERATOR < ADMIN; a role may do what every lower role may. */
export function roleAtLeast(role: Role | undefined | null, needed: Role): boolean {
  return role != null && RANK[role] >= RANK[needed];
}

export function neededRoleText(needed: Role): string {
  return needed === 'ADMIN' ? 'Requires the ADMIN role' : `Requires the ${needed} role or higher`;
}

/** The API operation a button, page or menu entry is about. */
export type GatedOperation = OperationId;

/** The role the server demands for ``operation`` (its ``x-required-role``): the console's gates
 * read it here instead of spelling roles out, so they cannot drift from the API. A public
 * operation needs only a signed-in user. */
export function roleFor(operation: GatedOperation): Role {
  const role = REQUIRED_ROLE[operation];
  return role === 'PUBLIC' ? 'VIEWER' : role;
}

/** Whether ``operation`` belongs to the installation (users, projects, chaos, audit
 * verification): only the user's own role counts for it, never a role in a project. */
export function isInstanceOperation(operation: GatedOperation): boolean {
  return INSTANCE_OPERATIONS.has(operation);
}

/** Whether a user may call ``operation``: the installation's by the user's own role, a project's
 * by ``can`` (the role in the chosen project, lib/project-scope.tsx). */
export function mayCall(operation: GatedOperation, userRole: Role | undefined | null, can: (needed: Role) => boolean): boolean {
  const needed = roleFor(operation);
  return isInstanceOperation(operation) ? roleAtLeast(userRole, needed) : can(needed);
}

/** Whether a user may change nothing where they look: a VIEWER (of the chosen project, or of
 * every project for "all projects"). Such a user is shown no action buttons at all — greyed ones
 * they can never use were noise (review 2026-12-05 §5.15) — and one "read-only" note instead. A
 * higher role still sees the actions above it disabled, with the role they need: it can be given. */
export function isReadOnly(can: (needed: Role) => boolean): boolean {
  return !can('OPERATOR');
}

/** What gates a control: the operation it triggers (the rule), or, only where the server checks
 * more than the operation's role (a field only ADMINs may change), that stricter role. */
export type Gate = { operation: GatedOperation; requiredRole?: never } | { requiredRole: Role; operation?: never };

export function gateRole(gate: Gate): Role {
  return gate.operation !== undefined ? roleFor(gate.operation) : gate.requiredRole;
}

/** Splits a gated control's props into its gate and the rest (for the underlying button). */
export function splitGate<T extends Gate>(props: T): [Gate, Omit<T, 'operation' | 'requiredRole'>] {
  const { operation, requiredRole, ...rest } = props;
  const gate = (operation !== undefined ? { operation } : { requiredRole }) as Gate;
  return [gate, rest];
}
