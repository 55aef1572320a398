import { Button, Group, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import type { ApiToken, User } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { QueryState } from '../../components/QueryState';
import { TokenCells, TokenHeaderCells } from '../../components/TokenColumns';
import { useUserTokens } from './api/list-user-tokens';
import { useRevokeUserToken } from './api/revoke-user-token';

function UserTokenRow({ user, token }: { user: User; token: ApiToken }) {
  const revoke = useRevokeUserToken(user.id);
  return (
    <Table.Tr data-token={token.name}>
      <TokenCells token={token} />
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
          <Table.ScrollContainer type="native" minWidth={720} tabIndex={0} aria-label={`API tokens of ${user.username} (scrollable)`}>
            <Table striped withTableBorder fz="sm" aria-label={`API tokens of ${user.username}`}>
              <Table.Thead>
                <Table.Tr>
                  <TokenHeaderCells />
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
