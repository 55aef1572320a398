export interface DiffRow {
  field: string;
  before: unknown;
  after: unknown;
  change: 'added' | 'removed' | 'changed' | 'same';
}

const asRecord = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** Field-by-field comparison of an audit event's `details.before` and `details.after`. */
export function diffDetails(details: unknown): DiffRow[] | null {
  const d = asRecord(details);
  if (!('before' in d) && !('after' in d)) return null;
  const before = asRecord(d.before);
  const after = asRecord(d.after);
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return fields.map((field) => {
    const b = before[field];
    const a = after[field];
    const change = !(field in before) ? 'added' : !(field in after) ? 'removed' : JSON.stringify(a) === JSON.stringify(b) ? 'same' : 'changed';
    return { field, before: b, after: a, change };
  });
}
