import { JsonInput, List, Stack, Text } from '@mantine/core';
import type { JsonSchema } from '../lib/json-schema';

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
  return (
    <Stack gap={4}>
      <JsonInput
        label={label}
        description={props.length ? `Fields: ${props.map(([k, p]) => `${k}${schema?.required?.includes(k) ? '*' : ''}${p.type ? ` (${String(p.type)})` : ''}`).join(', ')}` : undefined}
        value={value}
        onChange={onChange}
        autosize
        minRows={4}
        maxRows={16}
        formatOnBlur
        validationError={null}
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
      {schema && props.length === 0 && (
        <Text size="xs" c="dimmed">
          This handler takes no documented fields.
        </Text>
      )}
    </Stack>
  );
}
