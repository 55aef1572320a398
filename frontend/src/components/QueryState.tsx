import { Center, Loader, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { ErrorAlert } from './ErrorAlert';

/** Loading, error and empty states for a query-backed section, so every list says which one it is in. */
export function QueryState({
  isPending,
  error,
  isEmpty,
  empty,
  onRetry,
  hideFields,
  children,
}: {
  isPending: boolean;
  error: unknown;
  isEmpty?: boolean;
  empty?: ReactNode;
  /** The query's refetch: a failed load offers Retry. */
  onRetry?: () => unknown;
  /** The field errors are shown beside their fields already. */
  hideFields?: boolean | readonly string[];
  children: ReactNode;
}) {
  if (isPending) {
    return (
      <Center py="xl" aria-busy="true">
        {/* A spinner is a status: a name on a span with no role is one axe forbids
            (aria-prohibited-attr), and a screen reader would not announce it. */}
        <Loader size="sm" role="status" aria-label="Loading" />
      </Center>
    );
  }
  if (error) return <ErrorAlert error={error} title="Could not load" onRetry={onRetry} hideFields={hideFields} />;
  if (isEmpty) {
    return (
      <Stack align="center" py="xl">
        <Text c="dimmed">{empty ?? 'Nothing here yet.'}</Text>
      </Stack>
    );
  }
  return <>{children}</>;
}
