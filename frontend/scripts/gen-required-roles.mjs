// Writes src/api/required-roles.ts: the role each API operation needs, read from the
// `x-required-role` the server puts on every operation of openapi.json. The console gates its
// buttons, pages and navigation with this map, so a role rule lives only in the server's
// @requires decorator. `--check` fails (exit 1) when the file is stale, like gen:api:check.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'src/api/required-roles.ts');
const spec = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

const roles = {};
for (const [path, item] of Object.entries(spec.paths)) {
  for (const method of METHODS) {
    const op = item[method];
    if (!op) continue;
    const role = op['x-required-role'];
    if (!op.operationId || !role) {
      console.error(`${method.toUpperCase()} ${path}: no operationId or x-required-role in openapi.json`);
      process.exit(1);
    }
    roles[op.operationId] = role;
  }
}

const lines = Object.keys(roles)
  .sort()
  .map((id) => `  ${id}: '${roles[id]}',`);
const text = `// Generated from openapi.json (x-required-role) by scripts/gen-required-roles.mjs: do not edit.
// Run \`npm run gen:api\` after the API changes.
import type { operations } from './schema';
import type { Role } from './types';

export type OperationId = keyof operations;

export const REQUIRED_ROLE = {
${lines.join('\n')}
} as const satisfies Record<OperationId, Role | 'PUBLIC'>;
`;

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (current !== text) {
    console.error('src/api/required-roles.ts is stale: run `npm run gen:api`');
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
}
