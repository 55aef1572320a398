import { Paper, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** One of the dashboard's panels: a bordered region named by its heading. */
export function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Paper withBorder p="md" component="section" aria-label={title}>
      <Title order={2} size="h4" mb="sm">
        {title}
      </Title>
      {children}
    </Paper>
  );
}
