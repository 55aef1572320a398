import { Group, Text, Title } from '@mantine/core';
import { useContext, useEffect, type ReactNode } from 'react';
import { isReadOnly } from '../lib/roles';
import { SessionContext } from '../lib/session';

/** The tab and history entry name the page: "Jobs · cronplane", not "cronplane" for every page. */
export function useDocumentTitle(title: string | undefined) {
  useEffect(() => {
    if (title) document.title = `${title} · cronplane`;
  }, [title]);
}

/** A page's h1 (and its tab title), with the page's actions beside it. Where a page has actions
 * and the user may take none of them (a VIEWER: GatedButton shows them nothing), one note says the
 * page is read-only for them, instead of a row of greyed buttons (review 2026-12-05 §5.15). */
export function PageHeader({ title, documentTitle, children }: { title: ReactNode; documentTitle?: string; children?: ReactNode }) {
  useDocumentTitle(documentTitle ?? (typeof title === 'string' ? title : undefined));
  const session = useContext(SessionContext);
  const readOnly = session?.user != null && isReadOnly(session.can);
  return (
    <Group justify="space-between" mb="md" wrap="wrap">
      <Title order={1} size="h2">
        {title}
      </Title>
      {children && (
        <Group gap="sm">
          {readOnly && (
            <Text size="sm" fw={500} data-testid="read-only-note" title="Your role here is VIEWER: you can see everything, change nothing">
              Read-only (VIEWER)
            </Text>
          )}
          {children}
        </Group>
      )}
    </Group>
  );
}
