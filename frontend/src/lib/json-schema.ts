/**
 * A small JSON Schema checker for handler payloads: the keywords handler schemas use (type, required,
 * properties, additionalProperties, enum, const, min/max, lengths, items, pattern). It gives instant
 * feedback in forms; the API still validates every payload on submission.
 */
export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  pattern?: string;
  description?: string;
  default?: unknown;
};

export interface SchemaError {
  path: string; // "payload.seconds" style, "" for the root
  message: string;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

export function validateJson(value: unknown, schema: JsonSchema, path = ''): SchemaError[] {
  const errors: SchemaError[] = [];
  const at = (message: string) => errors.push({ path, message });
  const label = path || 'value';

  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => matchesType(value, t))) {
      at(`${label} must be ${types.join(' or ')}, not ${typeOf(value)}`);
      return errors;
    }
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    at(`${label} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  }
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    at(`${label} must be ${JSON.stringify(schema.const)}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) at(`${label} must be ≥ ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) at(`${label} must be ≤ ${schema.maximum}`);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum)
      at(`${label} must be > ${schema.exclusiveMinimum}`);
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum)
      at(`${label} must be < ${schema.exclusiveMaximum}`);
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      at(`${label} must have at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      at(`${label} must have at most ${schema.maxLength} characters`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value))
      at(`${label} must match ${schema.pattern}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      at(`${label} must have at least ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      at(`${label} must have at most ${schema.maxItems} items`);
    if (schema.items) value.forEach((v, i) => errors.push(...validateJson(v, schema.items as JsonSchema, `${path}[${i}]`)));
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const props = schema.properties ?? {};
    for (const key of schema.required ?? []) {
      if (!(key in obj)) errors.push({ path: join(path, key), message: `${join(path, key)} is required` });
    }
    for (const [key, v] of Object.entries(obj)) {
      const sub = props[key];
      if (sub) errors.push(...validateJson(v, sub, join(path, key)));
      else if (schema.additionalProperties === false)
        errors.push({ path: join(path, key), message: `${join(path, key)} is not an allowed property` });
      else if (typeof schema.additionalProperties === 'object')
        errors.push(...validateJson(v, schema.additionalProperties, join(path, key)));
    }
  }
  return errors;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** Parses editor text and validates it; `errors` empty means the payload may be sent. */
export function checkPayloadText(
  text: string,
  schema: JsonSchema | undefined,
): { value?: unknown; errors: string[] } {
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
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
