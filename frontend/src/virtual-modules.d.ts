declare module 'virtual:required-roles' {
  /** operationId → x-required-role, from openapi.json (see vite.config.ts). */
  export const REQUIRED_ROLE: Readonly<Record<string, 'VIEWER' | 'OPERATOR' | 'ADMIN' | 'PUBLIC'>>;
}
