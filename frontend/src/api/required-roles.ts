import { INSTANCE_OPERATIONS as INSTANCE_FROM_THE_DOCUMENT, REQUIRED_ROLE as FROM_THE_DOCUMENT } from 'virtual:required-roles';
import type { operations } from './schema';
import type { Role } from './types';

export type OperationId = keyof operations;

/** The role each operation of the API needs, from openapi.json's `x-required-role` (built by the
 * `virtual:required-roles` plugin in vite.config.ts). */
export const REQUIRED_ROLE: Readonly<Record<OperationId, Role | 'PUBLIC'>> = FROM_THE_DOCUMENT;

/** The installation's operations (`x-role-scope: instance`): a role in a project never reaches
 * them, so their gates read the user's own role. */
export const INSTANCE_OPERATIONS: ReadonlySet<OperationId> = new Set(INSTANCE_FROM_THE_DOCUMENT as OperationId[]);
