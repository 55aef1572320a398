import { Alert, List } from '@mantine/core';
import { ApiError, errorMessage } from '../api/problem';

/** Shows an API problem's `detail` (and any field errors not shown beside their fields). */
export function ErrorAlert({ error, title = 'Request failed', hideFields = false }: { error: unknown; title?: string; hideFields?: boolean }) {
  if (!error) return null;
  const fields = error instanceof ApiError && !hideFields ? Object.entries(error.fieldErrors) : [];
  const heading = error instanceof ApiError ? `${error.problem.title || title} (${error.status})` : title;
  return (
    <Alert color="red" title={heading} role="alert">
      {errorMessage(error)}
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
