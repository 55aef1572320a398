import { Code, Stack } from '@mantine/core';
import { secretRefs } from '../lib/secret-refs';
import { SecretChips } from './SecretChip';

export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  const secrets = secretRefs(value);
  const code = (
    // Long lines wrap (no sideways scroll, review 2026-12-05 §5.14); still focusable: a long
    // payload scrolls down, and a keyboard user must be able to scroll it too.
    <Code block aria-label={label} tabIndex={0} className="cp-json-block">
      {value === undefined || value === null ? 'null' : JSON.stringify(value, null, 2)}
    </Code>
  );
  if (secrets.length === 0) return code;
  return (
    <Stack gap={4}>
      <SecretChips names={secrets} label={`${label} uses secrets`} />
      {code}
    </Stack>
  );
}
