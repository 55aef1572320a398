import { Code, Table } from '@mantine/core';
import type { ApiToken } from '../api/types';
import { RelativeTime } from './RelativeTime';

/** What a token's row says, the same on Account (your tokens) and Users (an ADMIN's view of anyone's):
 * the caller adds the Actions cell. The secret is never shown; its prefix identifies it. */
export function TokenHeaderCells() {
  return (
    <>
      <Table.Th>Name</Table.Th>
      <Table.Th>Role</Table.Th>
      <Table.Th>Project</Table.Th>
      <Table.Th>Token</Table.Th>
      <Table.Th>Created</Table.Th>
      <Table.Th>Expires</Table.Th>
      <Table.Th>Last used</Table.Th>
    </>
  );
}

export function TokenCells({ token }: { token: ApiToken }) {
  return (
    <>
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
    </>
  );
}
