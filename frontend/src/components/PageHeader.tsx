import { Group, Title } from '@mantine/core';
import { useEffect, type ReactNode } from 'react';

/** The tab and history entry name the page: "Jobs · cronplane", not "cronplane" for every page. */
export function useDocumentTitle(title: string | undefined) {
  useEffect(() => {
    if (title) document.title = `${title} · cronplane`;
  }, [title]);
}

export function PageHeader({ title, documentTitle, children }: { title: ReactNode; documentTitle?: string; children?: ReactNode }) {
  useDocumentTitle(documentTitle ?? (typeof title === 'string' ? title : undefined));
  return (
    <Group justify="space-between" mb="md" wrap="wrap">
      <Title order={1} size="h2">
        {title}
      </Title>
      {children && <Group gap="sm">{children}</Group>}
    </Group>
  );
}
