/**
 * Handler payloads checked against the handler's JSON Schema in the API's dialect (draft 2020-12,
 * `jsonschema.Draft202012Validator` in `handlers/registry.py`), by a maintained validator,
 * `@cfworker/json-schema`, that interprets schemas instead of compiling them: the console's
 * Content-Security-Policy has no 'unsafe-eval', which Ajv's `new Function` would need, and handler
 * schemas (plugins' included) arrive at run time from GET /handlers, so Ajv's build-time standalone
 * code cannot cover them (docs/adr/0040-payload-schema-validator.md). It gives instant feedback in
 * forms; the API still validates every payload on submission.
 */
import { dereference, encodePointer, validate, type OutputUnit, type Schema } from '@cfworker/json-schema';
import { isSecretRef } from './secret-refs';

/** A handler's payload schema as GET /handlers sends it; the fields the editor reads are named. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  minimum?: number;
  default?: unknown;
  description?: string;
  [keyword: string]: unknown;
}

export interface SchemaError {
  path: string; // "headers.Accept", "expect_status[0]" style; "" for the root
  message: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

// Keywords whose value is one subschema, a list of them, or a map of names to them (draft 2020-12).
const ONE = new Set(['additionalProperties', 'unevaluatedProperties', 'items', 'unevaluatedItems', 'contains', 'propertyNames', 'not', 'if', 'then', 'else']);
const LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
// What the API's validator does not assert, although cfworker would: `format` is an annotation
// there (no FormatChecker), and these older keywords are not part of draft 2020-12.
const NOT_ASSERTED = new Set(['format', 'dependencies', 'additionalItems', '$recursiveRef', '$recursiveAnchor']);

/**
 * The schema as the validator gets it: a copy (cfworker annotates what it dereferences), without
 * the keywords above, and with boolean subschemas written as objects so that `false` is reported
 * with a real keyword location (`{not: {}}` rejects everything, as `false` does).
 */
function prepare(schema: unknown): Schema {
  if (schema === true) return {};
  if (schema === false) return { not: {} };
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema as Schema;
  const out: Schema = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (NOT_ASSERTED.has(keyword)) continue;
    if (ONE.has(keyword)) out[keyword] = Array.isArray(value) ? value.map(prepare) : prepare(value);
    else if (LIST.has(keyword) && Array.isArray(value)) out[keyword] = value.map(prepare);
    else if (MAP.has(keyword) && value && typeof value === 'object')
      out[keyword] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, prepare(v)]));
    else out[keyword] = value; // enum, const, default, required, bounds…: data, copied as they are
  }
  return out;
}

interface Compiled {
  schema: Schema;
  lookup: Record<string, Schema>;
}
// The schema object of a GET /handlers answer stays the same between renders: prepared once.
const compiled = new WeakMap<object, Compiled>();

function compile(schema: JsonSchema): Compiled {
  let found = compiled.get(schema);
  if (!found) {
    const prepared = prepare(schema);
    found = { schema: prepared, lookup: dereference(prepared) as Record<string, Schema> };
    compiled.set(schema, found);
  }
  return found;
}

/** Instance pointer ("#/a/0") → its segments. */
function segments(pointer: string): string[] {
  if (pointer === '#' || pointer === '') return [];
  return pointer
    .replace(/^#\//, '')
    .split('/')
    .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Segments of an instance pointer → "a.b[0]" (an index only where the value there is an array). */
function readablePath(instance: unknown, parts: string[]): string {
  let path = '';
  let at: unknown = instance;
  for (const part of parts) {
    if (Array.isArray(at)) {
      path += `[${part}]`;
      at = at[Number(part)];
    } else {
      path = path ? `${path}.${part}` : part;
      at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[part] : undefined;
    }
  }
  return path;
}

function valueAt(instance: unknown, parts: string[]): unknown {
  let at: unknown = instance;
  for (const part of parts) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[Array.isArray(at) ? Number(part) : part] : undefined;
  return at;
}

/** The schema holding the keyword at `keywordLocation` ("#/properties/a/$ref/minimum"), through $refs. */
function keywordHolder(c: Compiled, keywordLocation: string): Schema | undefined {
  const parts = segments(keywordLocation).slice(0, -1);
  let at: unknown = c.schema;
  for (const part of parts) {
    if (at === null || typeof at !== 'object') return undefined;
    const node = at as Schema;
    at = part === '$ref' && typeof node.$ref === 'string' ? c.lookup[node.__absolute_ref__ ?? node.$ref] : (node as Record<string, unknown>)[part];
  }
  return at !== null && typeof at === 'object' && !Array.isArray(at) ? (at as Schema) : undefined;
}

// Errors that only say "something below failed": the API reports what failed below, so do we.
const WRAPPERS = new Set(['$ref', 'allOf', 'if', 'properties', 'patternProperties', 'additionalProperties', 'unevaluatedProperties', 'items', 'prefixItems', 'unevaluatedItems', 'dependentSchemas', 'propertyNames']);
// Errors the API reports once, without what failed inside ("expected one of the allowed forms").
const WHOLE = new Set(['anyOf', 'oneOf', 'not', 'contains']);

const count = (n: unknown, noun: string) => `${String(n)} ${n === 1 ? noun : noun === 'property' ? 'properties' : `${noun}s`}`;
const list = (values: unknown[]) => values.map((v) => JSON.stringify(v)).join(', ');
const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

function describe(e: OutputUnit, c: Compiled, instance: unknown): SchemaError {
  const parts = segments(e.instanceLocation);
  const path = readablePath(instance, parts);
  const label = path || 'value';
  const value = valueAt(instance, parts);
  const holder = keywordHolder(c, e.keywordLocation);
  const wanted = holder?.[e.keyword] as unknown;
  const at = (message: string, where = path): SchemaError => ({ path: where, message });
  switch (e.keyword) {
    case 'type': {
      const types = Array.isArray(wanted) ? wanted : [wanted];
      return at(`${label} must be ${types.join(' or ')}, not ${typeOf(value)}`);
    }
    case 'enum':
      return at(`${label} must be one of ${list(Array.isArray(wanted) ? wanted : [])}`);
    case 'const':
      return at(`${label} must be ${JSON.stringify(wanted)}`);
    case 'required': {
      const key = /required property "(.*)"\.$/s.exec(e.error)?.[1] ?? '';
      return at(`${join(path, key)} is required`, join(path, key));
    }
    case 'dependentRequired': {
      const [, has, needs] = /^Instance has "(.*)" but does not have "(.*)"\.$/s.exec(e.error) ?? [];
      return at(`${join(path, needs ?? '')} is required when ${join(path, has ?? '')} is set`, join(path, needs ?? ''));
    }
    case 'minimum':
      return at(`${label} must be ≥ ${String(wanted)}`);
    case 'maximum':
      return at(`${label} must be ≤ ${String(wanted)}`);
    case 'exclusiveMinimum':
      return at(`${label} must be > ${String(wanted)}`);
    case 'exclusiveMaximum':
      return at(`${label} must be < ${String(wanted)}`);
    case 'multipleOf':
      return at(`${label} must be a multiple of ${String(wanted)}`);
    case 'minLength':
      return at(`${label} must have at least ${count(wanted, 'character')}`);
    case 'maxLength':
      return at(`${label} must have at most ${count(wanted, 'character')}`);
    case 'pattern':
      return at(`${label} must match ${String(wanted)}`);
    case 'minItems':
      return at(`${label} must have at least ${count(wanted, 'item')}`);
    case 'maxItems':
      return at(`${label} must have at most ${count(wanted, 'item')}`);
    case 'uniqueItems':
      return at(`${label} must not repeat an item`);
    case 'minProperties':
      return at(`${label} must have at least ${count(wanted, 'property')}`);
    case 'maxProperties':
      return at(`${label} must have at most ${count(wanted, 'property')}`);
    case 'contains':
      return at(`${label} must contain a matching item`);
    case 'minContains':
      return at(`${label} must contain at least ${count(wanted, 'matching item')}`);
    case 'maxContains':
      return at(`${label} must contain at most ${count(wanted, 'matching item')}`);
    case 'anyOf':
      return at(`${label} must match one of the allowed forms`);
    case 'oneOf': {
      const matches = Number(/\((\d+) matches\)/.exec(e.error)?.[1] ?? 0);
      return at(matches > 1 ? `${label} must match exactly one of the allowed forms, not ${matches}` : `${label} must match one of the allowed forms`);
    }
    case 'not': {
      // `false` (prepared as `not: {}`): nothing is allowed here.
      const nothing = wanted !== null && typeof wanted === 'object' && Object.keys(wanted).length === 0;
      if (!nothing) return at(`${label} must not match the schema under "not"`);
      const parent = valueAt(instance, parts.slice(0, -1));
      const inObject = parts.length > 0 && parent !== null && typeof parent === 'object' && !Array.isArray(parent);
      return at(inObject ? `${label} is not an allowed property` : `${label} is not allowed`);
    }
    default:
      return at(`${label}: ${e.error}`);
  }
}

/** Where each `{"$secret": NAME}` is (instance pointers), and the value with each one a string. */
function withoutSecrets(value: unknown, pointer = '#', found: Set<string> = new Set()): [unknown, Set<string>] {
  if (isSecretRef(value)) {
    found.add(pointer);
    return ['\u2063secret\u2063', found]; // the API's stand-in (domain/secrets.PLACEHOLDER): a string of unknown content
  }
  const child = (k: string | number) => `${pointer}/${encodePointer(String(k))}`;
  if (Array.isArray(value)) return [value.map((v, i) => withoutSecrets(v, child(i), found)[0]), found];
  if (value !== null && typeof value === 'object')
    return [Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutSecrets(v, child(k), found)[0]])), found];
  return [value, found];
}

/**
 * Every violation of `schema` by `value`, as the API decides them: a message per failing keyword
 * (path + what was expected), anyOf/oneOf/not/contains once for the whole value. A secret
 * reference stands for a string whose content is unknown until the attempt runs: only its type is
 * checked (handlers/payload_check.py does the same).
 */
export function validateJson(value: unknown, schema: JsonSchema): SchemaError[] {
  const c = compile(schema);
  const [instance, secrets] = withoutSecrets(value);
  let units: OutputUnit[];
  try {
    units = validate(instance, c.schema, '2020-12', c.lookup, false).errors;
  } catch {
    // A $ref the console cannot resolve (another document): the API decides on submission.
    return [];
  }
  const inside: string[] = [];
  const errors: SchemaError[] = [];
  const seen = new Set<string>();
  for (const unit of units) {
    if (inside.some((loc) => unit.keywordLocation.startsWith(`${loc}/`))) continue;
    if (WHOLE.has(unit.keyword)) inside.push(unit.keywordLocation);
    else if (WRAPPERS.has(unit.keyword)) continue;
    if (secrets.has(unit.instanceLocation) && unit.keyword !== 'type') continue;
    const error = describe(unit, c, instance);
    if (seen.has(error.message)) continue;
    seen.add(error.message);
    errors.push(error);
  }
  return errors;
}

/** Parses editor text and validates it; `errors` empty means the payload may be sent. */
export function checkPayloadText(text: string, schema: JsonSchema | undefined): { value?: unknown; errors: string[] } {
  let value: Json;
  try {
    value = text.trim() === '' ? {} : (JSON.parse(text) as Json);
  } catch (e) {
    return { errors: [`Not valid JSON: ${(e as Error).message}`] };
  }
  if (typeOf(value) !== 'object') return { errors: ['The payload must be a JSON object'] };
  const errors = schema ? validateJson(value, schema).map((e) => e.message) : [];
  return { value, errors };
}

/** A starting payload from a schema: required properties with their defaults or a typed blank. */
export function examplePayload(schema: JsonSchema | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of schema?.required ?? []) {
    const p = schema?.properties?.[key] ?? {};
    const t = Array.isArray(p.type) ? p.type[0] : p.type;
    out[key] =
      p.default ??
      (p.enum ? p.enum[0] : t === 'integer' || t === 'number' ? (p.minimum ?? 0) : t === 'array' ? [] : t === 'object' ? {} : t === 'boolean' ? false : '');
  }
  return out;
}
