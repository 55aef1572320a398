import { sameJson } from '../../lib/json-compare';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A version's `{field: [before, after]}` as rows to read: a field whose value is an object
 * (`alerts`, `payload`) becomes one row per key that changed — `alerts.on_failure  false → true`
 * rather than two JSON blobs that differ in one key (review 2026-12-05 §5.6). Keys compare by
 * content, so a key order change is no change. Sorted by field as the API gives them.
 */
export function changedFields(changes: Record<string, unknown[]>): [string, unknown, unknown][] {
  const rows: [string, unknown, unknown][] = [];
  for (const [field, pair] of Object.entries(changes)) {
    const [before, after] = pair;
    const objects = (isRecord(before) || before == null) && (isRecord(after) || after == null) && (isRecord(before) || isRecord(after));
    if (!objects) {
      rows.push([field, before, after]);
      continue;
    }
    const was = isRecord(before) ? before : {};
    const now = isRecord(after) ? after : {};
    const keys = [...new Set([...Object.keys(was), ...Object.keys(now)])].sort();
    const changed = keys.filter((k) => !sameJson(was[k], now[k]));
    // An object emptied or filled as a whole ({} → null) still says so in one row.
    if (changed.length === 0) rows.push([field, before, after]);
    for (const k of changed) rows.push([`${field}.${k}`, was[k], now[k]]);
  }
  return rows;
}
