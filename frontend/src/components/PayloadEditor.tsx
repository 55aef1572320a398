import { Button, Group, JsonInput, List, Stack, Text } from '@mantine/core';
import { useRef } from 'react';
import { useSecretNames } from '../api/queries/list-secret-names';
import type { JsonSchema } from '../lib/json-schema';
import { secretRefsInText, secretRefText } from '../lib/secret-refs';
import { SecretChips } from './SecretChip';

/** JSON editor for a handler payload; the caller validates (checkPayloadText) and passes the messages in. */
export function PayloadEditor({
  value,
  onChange,
  schema,
  errors,
  label = 'Payload (JSON)',
}: {
  value: string;
  onChange: (text: string) => void;
  schema?: JsonSchema;
  errors: string[];
  label?: string;
}) {
  const props = schema?.properties ? Object.entries(schema.properties) : [];
  const input = useRef<HTMLTextAreaElement>(null);
  const known = useSecretNames();
  const used = secretRefsInText(value);
  // A reference goes where the cursor is (replacing a selected value), as typed text would.
  const insert = (name: string) => {
    const el = input.current;
    const start = el?.selectionStart ?? value.length;
    const end = el?.selectionEnd ?? value.length;
    onChange(value.slice(0, start) + secretRefText(name) + value.slice(end));
  };
  return (
    <Stack gap={4}>
      <JsonInput
        ref={input}
        label={label}
        description={props.length ? `Fields: ${props.map(([k, p]) => `${k}${schema?.required?.includes(k) ? '*' : ''}${p.type ? ` (${String(p.type)})` : ''}`).join(', ')}` : undefined}
        value={value}
        onChange={onChange}
        autosize
        minRows={4}
        maxRows={16}
        formatOnBlur
        // JsonInput shows validationError instead of error once its own parse on blur fails; it is
        // the caller's message then too (checkPayloadText's "Not valid JSON: …"), not a bare
        // red border.
        validationError={errors[0] ?? 'Not valid JSON'}
        error={errors.length > 0 ? errors[0] : undefined}
        styles={{ input: { fontFamily: 'monospace' } }}
      />
      {errors.length > 1 && (
        <List size="xs" c="red">
          {errors.slice(1).map((e) => (
            <List.Item key={e}>{e}</List.Item>
          ))}
        </List>
      )}
      <SecretChips names={used} label="Uses secrets" />
      {(known.data?.length ?? 0) > 0 && (
        <Group gap={4} aria-label="Known secrets">
          <Text size="xs" c="dimmed">
            Insert a secret reference (resolved on the worker; the value never reaches the database):
          </Text>
          {known.data?.map((name) => (
            <Button key={name} size="compact-xs" variant="default" onClick={() => insert(name)} aria-label={`Insert secret ${name}`}>
              {`{"$secret": "${name}"}`}
            </Button>
          ))}
        </Group>
      )}
      {schema && props.length === 0 && (
        <Text size="xs" c="dimmed">
          This handler takes no documented fields.
        </Text>
      )}
    </Stack>
  );
}
