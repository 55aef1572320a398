import { Alert, Button, Group, List, Text } from '@mantine/core';
import { ApiError, errorMessage } from '../api/problem';

/** fetch() rejects with a TypeError ("Failed to fetch") when no response came at all. */
const unreachable = (error: unknown) => error instanceof TypeError;

/** Shows an API problem's `detail` (and any field errors not shown beside their fields), with a
 * Retry button when the caller can ask again. */
export function ErrorAlert({
  error,
  title = 'Request failed',
  hideFields = false,
  onRetry,
}: {
  error: unknown;
  title?: string;
  /** true, or the fields whose errors show beside them already. */
  hideFields?: boolean | readonly string[];
  onRetry?: () => unknown;
}) {
  if (!error) return null;
  const shown = (field: string) => (typeof hideFields === 'boolean' ? !hideFields : !hideFields.includes(field));
  const fields = error instanceof ApiError ? Object.entries(error.fieldErrors).filter(([f]) => shown(f)) : [];
  const heading = error instanceof ApiError ? `${error.problem.title || title} (${error.status})` : title;
  return (
    <Alert color="red" title={heading} role="alert">
      <Group justify="space-between" wrap="wrap" gap="sm">
        <Text size="sm">{unreachable(error) ? 'The server is unreachable. Check your connection, then retry.' : errorMessage(error)}</Text>
        {onRetry && (
          <Button size="xs" variant="default" onClick={() => onRetry()}>
            Retry
          </Button>
        )}
      </Group>
      {fields.length > 0 && (
        <List size="sm" mt="xs">
          {fields.map(([f, m]) => (
            <List.Item key={f}>
              {f}: {m}
            </List.Item>
          ))}
        </List>
      )}
    </Alert>
  );
}
