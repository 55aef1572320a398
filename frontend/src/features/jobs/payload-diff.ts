/** Top-level keys whose value differs, as the server's audit event records them: key → [old, new]. */
export function payloadDiff(before: Record<string, unknown>, after: Record<string, unknown>): [string, unknown, unknown][] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys
    .filter((k) => !(k in before) || !(k in after) || JSON.stringify(before[k]) !== JSON.stringify(after[k]))
    .map((k) => [k, before[k], after[k]]);
}
