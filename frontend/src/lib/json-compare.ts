/**
 * JSON values compared by content: objects are equal when they have the same keys with equal
 * values, in any order (`{"a":1,"b":2}` is `{"b":2,"a":1}`); arrays in order. The audit diff and
 * the edit-conflict dialog showed a key-order-only difference as a change (review 2026-12-05 §2).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') {
    // undefined (absent) and null are the same "no value" for a field.
    return (a ?? null) === (b ?? null);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => sameJson(v, other[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  return [...keys].every((k) => sameJson(x[k], y[k]));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
  }
  return v;
}

/** A value to read: a string as itself, anything else as JSON with sorted keys (so two sides line
 * up), objects and arrays indented; absent and null as "—". */
export function showJson(v: unknown): string {
  if (v === undefined || v === null) return '—';
  if (typeof v === 'string') return v;
  if (typeof v !== 'object') return JSON.stringify(v);
  const text = JSON.stringify(sortKeys(v));
  return text.length <= 60 ? text : JSON.stringify(sortKeys(v), null, 2);
}

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
  change: 'added' | 'removed' | 'changed' | 'same';
}

/** Field by field, the changed ones first (in name order), then the unchanged ones. */
export function compareFields(before: Record<string, unknown>, after: Record<string, unknown>): FieldChange[] {
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const rows = fields.map((field): FieldChange => {
    const b = before[field];
    const a = after[field];
    const change = !(field in before) ? 'added' : !(field in after) ? 'removed' : sameJson(a, b) ? 'same' : 'changed';
    return { field, before: b, after: a, change };
  });
  return [...rows.filter((r) => r.change !== 'same'), ...rows.filter((r) => r.change === 'same')];
}
