import { Code, Group, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { ConfirmButton } from '../../components/ConfirmButton';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { useScheduleVersions } from './api/list-schedule-versions';
import { useRollbackSchedule } from './api/rollback-schedule';

const show = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

/** Who changed what, version by version; an ADMIN can put an earlier definition back (as a new version). */
export function VersionHistory({ id, current, live }: { id: number; current: number; live: boolean }) {
  const versions = useScheduleVersions(id);
  const rollback = useRollbackSchedule();
  return (
    <Paper withBorder p="md" component="section" aria-label="Version history">
      <Title order={2} size="h4" mb="sm">
        Version history
      </Title>
      <QueryState isPending={versions.isPending} onRetry={() => versions.refetch()} error={versions.error} isEmpty={versions.data?.length === 0} empty="No versions recorded.">
        <Stack gap="sm">
          {(versions.data ?? []).map((v) => (
            <Paper key={v.version} withBorder p="xs" data-testid={`version-${v.version}`}>
              <Group justify="space-between">
                <Text size="sm">
                  <b>v{v.version}</b> by {v.actor}, <RelativeTime iso={v.at} />
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
              {Object.keys(v.changes).length > 0 && (
                <Table.ScrollContainer type="native" minWidth={360} mt={4} tabIndex={0} aria-label={`Changes in v${v.version} (scrollable)`}>
                <Table fz="xs" aria-label={`Changes in v${v.version}`}>
                  <Table.Tbody>
                    {Object.entries(v.changes).map(([field, [before, after]]) => (
                      <Table.Tr key={field}>
                        <Table.Td w={140}>
                          <Code>{field}</Code>
                        </Table.Td>
                        <Table.Td c="red" style={{ overflowWrap: 'anywhere' }}>
                          {show(before)}
                        </Table.Td>
                        <Table.Td c="green" style={{ overflowWrap: 'anywhere' }}>
                          {show(after)}
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
                </Table.ScrollContainer>
              )}
            </Paper>
          ))}
        </Stack>
      </QueryState>
    </Paper>
  );
}
