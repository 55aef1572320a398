import { Badge, Group, Kbd, Modal, ScrollArea, Text, TextInput, UnstyledButton } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { useScopedSearch } from '../lib/project-scope';
import { useSession } from '../lib/session';
import { commandsFor, isPaletteKey } from './command-palette';

/**
 * The command palette: jump to a job by id, a schedule by name, or run an action (new job, dead jobs, …). Arrow keys move,
 * Enter opens, Escape closes. Schedules come from GET /schedules?q= (the caller's projects only, like the list).
 */
export function CommandPalette({ defaultOpened = false }: { defaultOpened?: boolean }) {
  const [opened, setOpened] = useState(defaultOpened);
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState(0);
  const [debounced] = useDebouncedValue(query.trim(), 150);
  const { can } = useSession();
  const navigate = useNavigate();
  const scopedSearch = useScopedSearch();
  const listId = useId();

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!isPaletteKey(event)) return;
      event.preventDefault();
      setOpened((o) => !o);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  const schedules = useQuery({
    queryKey: ['schedules', 'palette', debounced],
    queryFn: () => unwrap(api.GET('/api/v1/schedules', { params: { query: { q: debounced, limit: 8 } } })),
    enabled: opened && debounced.length > 0 && !/^#?\d+$/.test(debounced),
    staleTime: 10_000,
  });
  const commands = commandsFor(query, can, schedules.data?.items ?? []);
  const current = Math.min(selected, Math.max(0, commands.length - 1));

  const close = () => {
    setOpened(false);
    setQuery('');
    setSelected(0);
  };
  const run = (index: number) => {
    const command = commands[index];
    if (!command) return;
    close();
    // Stay in the chosen project, as the navigation links do.
    const scope = scopedSearch.replace(/^\?/, '');
    void navigate(scope ? `${command.to}${command.to.includes('?') ? '&' : '?'}${scope}` : command.to);
  };

  return (
    <Modal opened={opened} onClose={close} title="Go to…" size="lg" yOffset="10vh">
      <TextInput
        data-autofocus
        role="combobox"
        aria-label="Command"
        aria-expanded={commands.length > 0}
        aria-controls={listId}
        aria-activedescendant={commands[current] ? `${listId}-${commands[current].id}` : undefined}
        placeholder="Job id, schedule name or action"
        value={query}
        onChange={(e) => {
          setQuery(e.currentTarget.value);
          setSelected(0);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') {
            e.preventDefault();
            setSelected(Math.min(commands.length - 1, current + 1));
          } else if (e.key === 'ArrowUp') {
            e.preventDefault();
            setSelected(Math.max(0, current - 1));
          } else if (e.key === 'Enter') {
            e.preventDefault();
            run(current);
          }
        }}
      />
      <ScrollArea.Autosize mah="50vh" mt="sm">
        <div role="listbox" id={listId} aria-label="Commands">
          {commands.map((command, index) => (
            <UnstyledButton
              key={command.id}
              id={`${listId}-${command.id}`}
              role="option"
              aria-selected={index === current}
              tabIndex={-1}
              className="cp-palette-option"
              onMouseEnter={() => setSelected(index)}
              onClick={() => run(index)}
            >
              <Group justify="space-between" wrap="nowrap">
                <Text size="sm" truncate="end">
                  {command.label}
                </Text>
                <Badge variant="light" size="sm">
                  {command.hint}
                </Badge>
              </Group>
            </UnstyledButton>
          ))}
          {commands.length === 0 && (
            <Text size="sm" c="dimmed" p="xs">
              Nothing matches.
            </Text>
          )}
        </div>
      </ScrollArea.Autosize>
      <Text size="xs" c="dimmed" mt="sm">
        <Kbd>↑</Kbd> <Kbd>↓</Kbd> to move, <Kbd>Enter</Kbd> to open; in tables <Kbd>j</Kbd> <Kbd>k</Kbd> move between rows.
      </Text>
    </Modal>
  );
}
