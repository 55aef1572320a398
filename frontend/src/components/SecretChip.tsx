import { Badge, Group, Text } from '@mantine/core';

/** A secret reference as the console shows it: the name, never a value (the server never has one to give). */
export function SecretChip({ name }: { name: string }) {
  return (
    <Badge variant="light" color="grape" radius="sm" tt="none" aria-label={`secret ${name}`} title={`Resolved on the worker from the secret ${name}`}>
      🔒 {name}
    </Badge>
  );
}

export function SecretChips({ names, label = 'Secrets' }: { names: string[]; label?: string }) {
  if (names.length === 0) return null;
  return (
    <Group gap={6} aria-label={label}>
      <Text size="xs" c="dimmed">
        {label}:
      </Text>
      {names.map((n) => (
        <SecretChip key={n} name={n} />
      ))}
    </Group>
  );
}
