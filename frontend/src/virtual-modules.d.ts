declare module 'virtual:required-roles' {
  /** operationId → x-required-role, from openapi.json (see vite.config.ts). */
  export const REQUIRED_ROLE: Readonly<Record<string, 'VIEWER' | 'OPERATOR' | 'ADMIN' | 'PUBLIC'>>;
  /** The operationIds whose x-role-scope is "instance": the installation's. */
  export const INSTANCE_OPERATIONS: readonly string[];
}
