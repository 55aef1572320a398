import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkPayloadText, examplePayload, validateJson, type JsonSchema } from './json-schema';
import shared from './payload-schema-cases.json';

interface Case {
  name: string;
  schema: JsonSchema;
  payload: Record<string, unknown>;
  console: string[];
}

describe('payload schemas: the cases the API is held to as well', () => {
  // backend/tests/unit/handlers/test_payload_schema_cases.py runs the same file through the API's
  // check (Draft202012Validator, secret references as payload_check.py treats them): a case is
  // valid there exactly when the console finds nothing.
  it.each((shared.cases as Case[]).map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(validateJson(c.payload, c.schema).map((e) => e.message)).toEqual(c.console);
  });
});

describe('validateJson', () => {
  it('names the path of each failure', () => {
    const schema: JsonSchema = { type: 'object', properties: { hosts: { type: 'array', items: { type: 'string', pattern: '^[a-z.]+$' } } } };
    expect(validateJson({ hosts: ['ok.example', 'BAD'] }, schema)).toEqual([{ path: 'hosts[1]', message: 'hosts[1] must match ^[a-z.]+$' }]);
    expect(validateJson({}, { type: 'object', required: ['a'] })).toEqual([{ path: 'a', message: 'a is required' }]);
    expect(validateJson('x', { type: 'object' })).toEqual([{ path: '', message: 'value must be object, not string' }]);
  });

  it("keeps keys that look like pointers or numbers as the payload's keys", () => {
    const schema: JsonSchema = { type: 'object', additionalProperties: { type: 'integer' } };
    expect(validateJson({ 'a/b~c': 'x', '0': 'y', 'with space#': 'z' }, schema).map((e) => e.path).sort()).toEqual(['0', 'a/b~c', 'with space#']);
  });

  it('leaves the schema it was given as it was (the query cache holds it)', () => {
    const schema: JsonSchema = { $defs: { n: { type: 'integer', format: 'int32' } }, type: 'object', properties: { n: { $ref: '#/$defs/n' }, off: false as unknown as JsonSchema } };
    const before = JSON.stringify(schema);
    validateJson({ n: 'x', off: 1 }, schema);
    expect(JSON.stringify(schema)).toBe(before);
    expect(Object.getOwnPropertyNames(schema.properties?.n)).toEqual(['$ref']);
  });

  it('lets the API decide when a $ref points outside the schema', () => {
    const schema: JsonSchema = { type: 'object', properties: { a: { $ref: 'https://schemas.example/other.json' } } };
    expect(validateJson({ a: 1 }, schema)).toEqual([]);
  });

  it('a property named like a keyword is a property', () => {
    const schema: JsonSchema = { type: 'object', properties: { format: { type: 'string' }, not: { type: 'integer' } }, required: ['format'] };
    expect(validateJson({ not: 'x' }, schema).map((e) => e.message)).toEqual(['format is required', 'not must be integer, not string']);
  });
});

describe('checkPayloadText', () => {
  const schema: JsonSchema = { type: 'object', properties: { seconds: { type: 'number', minimum: 0 } }, required: ['seconds'] };

  it('parses, then checks against the schema', () => {
    expect(checkPayloadText('{"seconds": 2}', schema)).toEqual({ value: { seconds: 2 }, errors: [] });
    expect(checkPayloadText('{"seconds": -2}', schema).errors).toEqual(['seconds must be ≥ 0']);
    expect(checkPayloadText('', undefined)).toEqual({ value: {}, errors: [] });
  });

  it('refuses text that is not a JSON object before any schema', () => {
    expect(checkPayloadText('{"seconds": 1', schema).errors[0]).toMatch(/^Not valid JSON: /);
    expect(checkPayloadText('[1]', schema).errors).toEqual(['The payload must be a JSON object']);
  });
});

describe('examplePayload', () => {
  it('fills the required properties with defaults or typed blanks', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: { method: { enum: ['GET', 'POST'] }, url: { type: 'string' }, seconds: { type: 'number', minimum: 1 }, retry: { type: 'boolean', default: true } },
      required: ['method', 'url', 'seconds', 'retry'],
    };
    expect(examplePayload(schema)).toEqual({ method: 'GET', url: '', seconds: 1, retry: true });
  });
});

describe('the validator under the console Content-Security-Policy', () => {
  // script-src 'self' without 'unsafe-eval' (Caddyfile, api/app.py): a validator that compiles
  // schemas to code would be refused in the browser. Held here so an upgrade cannot bring it in.
  it('@cfworker/json-schema builds no code at run time', () => {
    const dist = join(dirname(fileURLToPath(import.meta.url)), '../../node_modules/@cfworker/json-schema/dist/esm');
    const sources = readdirSync(dist).filter((f) => f.endsWith('.js'));
    expect(sources.length).toBeGreaterThan(3);
    for (const file of sources) expect(readFileSync(join(dist, file), 'utf8')).not.toMatch(/new Function|\beval\s*\(|\bFunction\s*\(/);
  });
});
