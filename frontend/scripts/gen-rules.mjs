// Writes src/api/rules.ts from openapi.json: the server's rules as values the console can run —
// the named status sets (string-enum components) and, for every schema a request body uses, the
// constraints and defaults of its fields (pattern, lengths, ranges, default). The server defines
// each once (backend domain/names.py, domain/schedule_definition.py, domain/states.py) and
// publishes it in the OpenAPI document; schema.d.ts carries the types, this file the values.
// `node scripts/gen-rules.mjs --check` fails when the file is not what the document gives.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'src/api/rules.ts');
const spec = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8'));
const schemas = spec.components.schemas;
const KEYS = ['pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'maxItems', 'default'];

function refsIn(node, found) {
  if (Array.isArray(node)) node.forEach((n) => refsIn(n, found));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.add(value.split('/').pop());
      else refsIn(value, found);
    }
  }
  return found;
}

// The schemas request bodies use, and the schemas those use.
const bodies = new Set();
for (const operations of Object.values(spec.paths))
  for (const operation of Object.values(operations)) if (operation?.requestBody) refsIn(operation.requestBody, bodies);
const pending = [...bodies];
while (pending.length) {
  const name = pending.pop();
  for (const inner of refsIn(schemas[name] ?? {}, new Set()))
    if (!bodies.has(inner)) {
      bodies.add(inner);
      pending.push(inner);
    }
}

function constraints(property) {
  const out = {};
  for (const key of KEYS) if (property[key] !== undefined) out[key] = property[key];
  const items = property.items && constraints(property.items);
  if (items && Object.keys(items).length) out.items = items;
  return out;
}

const lines = [
  '// Generated from openapi.json by scripts/gen-rules.mjs (`npm run gen:api`): do not edit.',
  "// The server's rules as values: status sets, and each request field's constraints and default.",
  "import type { components } from './schema';",
  '',
  "type Schemas = components['schemas'];",
];
for (const [name, schema] of Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))) {
  if (schema.type !== 'string' || !Array.isArray(schema.enum)) continue;
  lines.push('', `/** ${schema.description ?? name} */`);
  lines.push(`export const ${name}: readonly Schemas['${name}'][] = ${JSON.stringify(schema.enum)};`);
}
for (const name of [...bodies].sort()) {
  const properties = Object.entries(schemas[name]?.properties ?? {})
    .map(([field, property]) => [field, constraints(property)])
    .filter(([, rules]) => Object.keys(rules).length);
  if (!properties.length) continue;
  lines.push('', `export const ${name}Rules = {`);
  for (const [field, rules] of properties) lines.push(`  ${field}: ${JSON.stringify(rules)},`);
  lines.push('} as const;');
}
const text = lines.join('\n') + '\n';

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    /* missing: stale */
  }
  if (current !== text) {
    console.error('src/api/rules.ts is stale: run `npm run gen:api`');
    process.exit(1);
  }
} else writeFileSync(target, text);
