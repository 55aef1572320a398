import { Code } from '@mantine/core';

export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <Code block aria-label={label}>
      {value === undefined || value === null ? 'null' : JSON.stringify(value, null, 2)}
    </Code>
  );
}
