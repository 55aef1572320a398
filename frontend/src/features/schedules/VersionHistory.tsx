import { Button, Code, Collapse, Group, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import type { ScheduleVersion } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { useScheduleVersions } from './api/list-schedule-versions';
import { useRollbackSchedule } from './api/rollback-schedule';
import { changedFields } from './version-changes';

const show = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

/** One version's changes, a field a row. The columns have fixed widths (`table-layout: fixed`), so
 * before and after sit at the same x in every version's card (review 2026-12-05 §5.6: they moved
 * with each card's content). */
function Changes({ version, rows, created = false }: { version: number; rows: [string, unknown, unknown][]; created?: boolean }) {
  return (
    <Table.ScrollContainer type="native" minWidth={360} mt={4} tabIndex={0} aria-label={`Changes in v${version} (scrollable)`}>
      <Table fz="xs" aria-label={`Changes in v${version}`} layout="fixed">
        <colgroup>
          <col style={{ width: '15rem' }} />
          {!created && <col />}
          <col />
        </colgroup>
        <Table.Tbody>
          {rows.map(([field, before, after]) => (
            <Table.Tr key={field}>
              <Table.Td style={{ overflowWrap: 'anywhere' }}>
                <Code>{field}</Code>
              </Table.Td>
              {!created && (
                <Table.Td c="red" style={{ overflowWrap: 'anywhere' }}>
                  {show(before)}
                </Table.Td>
              )}
              <Table.Td c={created ? undefined : 'green'} style={{ overflowWrap: 'anywhere' }}>
                {show(after)}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** The first version made the schedule: "created", its definition a click away rather than every
 * field listed as "— → value". */
function Created({ version }: { version: ScheduleVersion }) {
  const [open, setOpen] = useState(false);
  const rows = changedFields(version.changes).map(([field, , after]): [string, unknown, unknown] => [field, undefined, after]);
  return (
    <>
      <Button variant="subtle" size="compact-xs" onClick={() => setOpen((o) => !o)} aria-expanded={open}>
        {open ? 'Hide the definition' : 'Show the definition'}
      </Button>
      <Collapse expanded={open}>{open && <Changes version={version.version} rows={rows} created />}</Collapse>
    </>
  );
}

/** Who changed what, version by version; an ADMIN can put an earlier definition back (as a new
 * version). Folded under the run history: the runs are what a reader of a schedule looks for
 * first (review 2026-12-05 §5.6). */
export function VersionHistory({ id, current, live }: { id: number; current: number; live: boolean }) {
  const versions = useScheduleVersions(id);
  const rollback = useRollbackSchedule();
  const [open, setOpen] = useState(false);
  const count = versions.data?.length;
  return (
    <Paper withBorder p="md" component="section" aria-label="Version history">
      <Group justify="space-between">
        <Title order={2} size="h4">
          Version history
        </Title>
        <Button variant="default" size="xs" onClick={() => setOpen((o) => !o)} aria-expanded={open} aria-controls={`versions-${id}`}>
          {open ? 'Hide versions' : `Show versions${count === undefined ? '' : ` (${count})`}`}
        </Button>
      </Group>
      <Collapse expanded={open} id={`versions-${id}`}>
        {open && (
          <QueryState isPending={versions.isPending} onRetry={() => versions.refetch()} error={versions.error} isEmpty={versions.data?.length === 0} empty="No versions recorded.">
            <Stack gap="sm" mt="sm">
              {(versions.data ?? []).map((v) => {
                const rows = changedFields(v.changes);
                return (
                  <Paper key={v.version} withBorder p="xs" data-testid={`version-${v.version}`}>
                    <Group justify="space-between">
                      <Text size="sm">
                        <b>v{v.version}</b> {v.version === 1 ? 'created' : 'changed'} by {v.actor}, <RelativeTime iso={v.at} />
                        {v.version === current && ' (current)'}
                      </Text>
                      {live && v.version !== current && (
                        <ConfirmButton
                          operation="rollbackSchedule"
                          size="xs"
                          variant="light"
                          title={`Roll back to v${v.version}?`}
                          message={`A new version (v${current + 1}) gets the definition of v${v.version}.`}
                          confirmLabel={`Roll back to v${v.version}`}
                          onConfirm={() => rollback.mutateAsync({ id, version: v.version })}
                        >
                          Roll back to v{v.version}
                        </ConfirmButton>
                      )}
                    </Group>
                    {v.version === 1 ? <Created version={v} /> : rows.length > 0 && <Changes version={v.version} rows={rows} />}
                  </Paper>
                );
              })}
            </Stack>
          </QueryState>
        )}
      </Collapse>
    </Paper>
  );
}
