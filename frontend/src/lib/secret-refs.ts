/** `{"$secret": "NAME"}` references in a payload (the server's rule: an object with exactly that key). */
const NAME = /^[A-Z0-9_]{1,64}$/;

export function isSecretRef(value: unknown): value is { $secret: string } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  const name = (value as Record<string, unknown>).$secret;
  return keys.length === 1 && keys[0] === '$secret' && typeof name === 'string' && NAME.test(name);
}

/** Every secret name referenced anywhere in `value`, sorted, once each. */
export function secretRefs(value: unknown): string[] {
  const found = new Set<string>();
  const walk = (v: unknown) => {
    if (isSecretRef(v)) found.add(v.$secret);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  return [...found].sort();
}

/** The same, for editor text that may not parse yet (then: none). */
export function secretRefsInText(text: string): string[] {
  try {
    return secretRefs(JSON.parse(text));
  } catch {
    return [];
  }
}

export const secretRefText = (name: string) => JSON.stringify({ $secret: name });
