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
  hideFields?: boolean;
  onRetry?: () => unknown;
}) {
  if (!error) return null;
  const fields = error instanceof ApiError && !hideFields ? Object.entries(error.fieldErrors) : [];
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
