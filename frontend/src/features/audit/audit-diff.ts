import { compareFields, type FieldChange } from '../../lib/json-compare';

export type DiffRow = FieldChange;

const asRecord = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** Field-by-field comparison of an audit event's `details.before` and `details.after`, by content
 * (key order inside a value is no change), the changed fields first. */
export function diffDetails(details: unknown): DiffRow[] | null {
  const d = asRecord(details);
  if (!('before' in d) && !('after' in d)) return null;
  return compareFields(asRecord(d.before), asRecord(d.after));
}

/** What an event names its target by, when its details carry a name: "flaky-etl" for a schedule
 * whose update records its fields, a user's username, a project's slug. */
export function targetName(details: unknown): string | null {
  const d = asRecord(details);
  for (const source of [d, asRecord(d.after), asRecord(d.before)]) {
    for (const key of ['name', 'username', 'slug']) {
      const value = source[key];
      if (typeof value === 'string' && value) return value;
    }
  }
  return null;
}
