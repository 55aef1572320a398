import { Button, Code, Group, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import type { ApiToken, User } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { useUserTokens } from './api/list-user-tokens';
import { useRevokeUserToken } from './api/revoke-user-token';

function UserTokenRow({ user, token }: { user: User; token: ApiToken }) {
  const revoke = useRevokeUserToken(user.id);
  return (
    <Table.Tr data-token={token.name}>
      <Table.Td>{token.name}</Table.Td>
      <Table.Td>{token.role}</Table.Td>
      <Table.Td>{token.project ?? 'every project'}</Table.Td>
      <Table.Td>
        <Code>cp_{token.prefix}_…</Code>
      </Table.Td>
      <Table.Td>
        <RelativeTime iso={token.created_at} />
      </Table.Td>
      <Table.Td>{token.expires_at ? <RelativeTime iso={token.expires_at} /> : 'never'}</Table.Td>
      <Table.Td>{token.last_used_at ? <RelativeTime iso={token.last_used_at} /> : 'never'}</Table.Td>
      <Table.Td>
        <ConfirmButton
          operation="deleteToken"
          size="compact-sm"
          variant="light"
          color="red"
          aria-label={`Revoke token ${token.name} of ${user.username}`}
          title={`Revoke ${user.username}'s token ${token.name}?`}
          message="Scripts that use it get 401 from their next request; the audit trail records the revocation. This cannot be undone."
          confirmLabel="Revoke token"
          onConfirm={() => revoke.mutateAsync(token.id)}
        >
          Revoke
        </ConfirmButton>
      </Table.Td>
    </Table.Tr>
  );
}

/** One user's API tokens, as an instance ADMIN sees them: what each may do, when it was last used, revoke. */
export function UserTokens({ user, onClose }: { user: User; onClose: () => void }) {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const tokens = useUserTokens(user.id, cursor);
  const rows = tokens.data?.items ?? [];
  const next = tokens.data?.next_cursor;
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="user-tokens-heading">
      <Stack>
        <Group justify="space-between">
          <Title order={2} size="h5" id="user-tokens-heading">
            API tokens of {user.username}
          </Title>
          <Button size="compact-sm" variant="default" onClick={onClose}>
            Close
          </Button>
        </Group>
        <Text size="sm" c="dimmed">
          Their live tokens (secrets are never shown). Revoking one stops it at once; their other tokens and sessions keep working.
        </Text>
        <QueryState
          isPending={tokens.isPending}
          onRetry={() => tokens.refetch()}
          error={tokens.error}
          isEmpty={rows.length === 0}
          empty={`${user.username} has no API tokens.`}
        >
          <Table.ScrollContainer minWidth={720} tabIndex={0} aria-label={`API tokens of ${user.username} (scrollable)`}>
            <Table striped withTableBorder fz="sm" aria-label={`API tokens of ${user.username}`}>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Role</Table.Th>
                  <Table.Th>Project</Table.Th>
                  <Table.Th>Token</Table.Th>
                  <Table.Th>Created</Table.Th>
                  <Table.Th>Expires</Table.Th>
                  <Table.Th>Last used</Table.Th>
                  <Table.Th>Actions</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((t) => (
                  <UserTokenRow key={t.id} user={user} token={t} />
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </QueryState>
        {(cursor || next) && (
          <Group>
            {cursor && (
              <Button size="compact-sm" variant="default" onClick={() => setCursor(undefined)}>
                First page
              </Button>
            )}
            {next && (
              <Button size="compact-sm" variant="default" onClick={() => setCursor(next)}>
                Next page
              </Button>
            )}
          </Group>
        )}
      </Stack>
    </Paper>
  );
}
