import { ActionIcon, Button, Group, NumberInput, Paper, Select, Stack, Text, Title } from '@mantine/core';
import { useSchedules } from './api/list-schedules';
import type { UpstreamRow } from './schedule-form';

export interface UpstreamEditorProps {
  value: UpstreamRow[];
  onChange: (rows: UpstreamRow[]) => void;
  /** Only schedules of this project can be upstream. */
  project: string;
  /** The schedule being edited (it cannot wait on itself). */
  selfId?: number;
  error?: string;
}

/** The schedules a schedule's fires wait on: each fire at T waits for that schedule's latest fire at or before T. */
export function UpstreamEditor({ value, onChange, project, selfId, error }: UpstreamEditorProps) {
  const schedules = useSchedules({ limit: 200 }, false);
  const choices = (schedules.data?.items ?? [])
    .filter((s) => s.project === project && s.id !== selfId)
    .map((s) => ({ value: String(s.id), label: `${s.name} (#${s.id})` }));
  const set = (i: number, row: Partial<UpstreamRow>) => onChange(value.map((r, j) => (j === i ? { ...r, ...row } : r)));

  return (
    <Paper withBorder p="md" component="section" aria-label="Upstream schedules">
      <Title order={2} size="h5" mb={4}>
        Chain: runs after
      </Title>
      <Text size="xs" c="dimmed" mb="sm">
        Each fire waits for these schedules&apos; fire of the same time (their latest at or before it). If that fire failed or made no job, or has not finished within the wait, this fire is skipped and the fire timeline says why.
      </Text>
      <Stack gap="xs">
        {value.map((row, i) => (
          <Group key={i} align="flex-end" wrap="nowrap" role="group" aria-label={`Upstream ${i + 1}`}>
            <Select
              label="Schedule"
              searchable
              placeholder="choose a schedule"
              data={row.schedule === '' || choices.some((c) => c.value === String(row.schedule)) ? choices : [...choices, { value: String(row.schedule), label: `#${row.schedule}` }]}
              value={row.schedule === '' ? null : String(row.schedule)}
              onChange={(id) => set(i, { schedule: id ? Number(id) : '' })}
              style={{ flex: 2 }}
            />
            <Select
              label="Run when it"
              allowDeselect={false}
              data={[
                { value: 'succeeded', label: 'succeeded' },
                { value: 'finished', label: 'finished (any end)' },
              ]}
              value={row.run_when}
              onChange={(w) => w && set(i, { run_when: w as UpstreamRow['run_when'] })}
              style={{ flex: 1 }}
            />
            <NumberInput label="Wait at most (s)" min={1} placeholder="until next fire" value={row.wait_seconds} onChange={(n) => set(i, { wait_seconds: n })} style={{ flex: 1 }} />
            <ActionIcon variant="subtle" color="red" aria-label={`Remove upstream ${i + 1}`} onClick={() => onChange(value.filter((_, j) => j !== i))} mb={4}>
              ✕
            </ActionIcon>
          </Group>
        ))}
        {error && (
          <Text c="red" size="sm" role="alert">
            {error}
          </Text>
        )}
        <Group>
          <Button variant="default" size="xs" onClick={() => onChange([...value, { schedule: '', run_when: 'succeeded', wait_seconds: '' }])}>
            Add upstream schedule
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}
