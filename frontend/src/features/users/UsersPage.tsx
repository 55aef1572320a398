import { Badge, Button, Group, Paper, PasswordInput, Select, Stack, Table, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/problem';
import { ROLES, type Role, type User } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { CursorPager } from '../../components/CursorPager';
import { ErrorAlert } from '../../components/ErrorAlert';
import { NoMatch } from '../../components/NoMatch';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { RelativeTime } from '../../components/RelativeTime';
import { RequireRole } from '../../components/RequireRole';
import { useUrlFilters, useUrlPaging } from '../../lib/search-params';
import { useSession } from '../../lib/session';
import { useCreateUser } from './api/create-user';
import { useDisableUser } from './api/disable-user';
import { useEnableUser } from './api/enable-user';
import { useUsers } from './api/list-users';
import { useLockUser } from './api/lock-user';
import { useUnlockUser } from './api/unlock-user';
import { useUpdateUserRole } from './api/update-user-role';
import { SearchInput } from '../../components/SearchInput';
import { ResetPasswordDialog } from './ResetPasswordDialog';
import { UserTokens } from './UserTokens';

const isLocked = (u: User) => u.locked;
const isDisabled = (u: User) => u.disabled;

function CreateUserForm() {
  const create = useCreateUser();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('VIEWER');
  const fields = create.error instanceof ApiError ? create.error.fieldErrors : {};
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(
      { username, password, role },
      {
        onSuccess: () => {
          setUsername('');
          setPassword('');
        },
      },
    );
  };
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h5" mb="sm">
        Create user
      </Title>
      <form onSubmit={submit} aria-label="Create user">
        <Group align="flex-start">
          <TextInput label="Username" required value={username} onChange={(e) => setUsername(e.currentTarget.value)} error={fields.username} />
          <PasswordInput label="Password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} error={fields.password} w={220} autoComplete="new-password" />
          <Select label="Role" allowDeselect={false} data={ROLES} value={role} onChange={(r) => r && setRole(r as Role)} w={140} error={fields.role} />
          <Button type="submit" mt={25} loading={create.isPending}>
            Create
          </Button>
        </Group>
        <ErrorAlert error={create.error} hideFields />
      </form>
    </Paper>
  );
}

function UserRow({ u, self, onTokens }: { u: User; self: boolean; onTokens: () => void }) {
  const setRole = useUpdateUserRole();
  const lock = useLockUser();
  const unlock = useUnlockUser();
  const disable = useDisableUser();
  const enable = useEnableUser();
  const locked = isLocked(u);
  const disabled = isDisabled(u);
  return (
    <Table.Tr>
      <Table.Td>
        {u.username} {self && <Badge size="xs">you</Badge>} {u.is_persona && <Badge size="xs" color="grape">demo persona</Badge>}
      </Table.Td>
      <Table.Td>
        <Select
          aria-label={`Role of ${u.username}`}
          size="xs"
          w={130}
          allowDeselect={false}
          data={ROLES}
          value={u.role}
          disabled={self || setRole.isPending}
          onChange={(r) => r && r !== u.role && setRole.mutate({ id: u.id, role: r as Role })}
        />
        {setRole.error != null && <ErrorAlert error={setRole.error} />}
      </Table.Td>
      <Table.Td>
        {disabled ? <Badge color="gray">disabled</Badge> : locked ? <Badge color="orange">locked</Badge> : <Badge color="green">active</Badge>}
      </Table.Td>
      <Table.Td>
        <RelativeTime iso={u.created_at} />
      </Table.Td>
      <Table.Td>
        <RelativeTime iso={u.last_login_at} />
      </Table.Td>
      <Table.Td>
        <Group gap="xs">
          <ConfirmButton
            operation={locked ? 'unlockUser' : 'lockUser'}
            size="compact-sm"
            variant="light"
            color={locked ? 'green' : 'orange'}
            disabled={self}
            aria-label={`${locked ? 'Unlock' : 'Lock'} ${u.username}`}
            title={`${locked ? 'Unlock' : 'Lock'} ${u.username}?`}
            message={locked ? 'They can sign in again.' : 'Their sessions and tokens stop working at once and they cannot sign in.'}
            confirmLabel={locked ? 'Unlock' : 'Lock'}
            onConfirm={() => (locked ? unlock : lock).mutateAsync(u.id)}
          >
            {locked ? 'Unlock' : 'Lock'}
          </ConfirmButton>
          <ConfirmButton
            operation={disabled ? 'enableUser' : 'disableUser'}
            size="compact-sm"
            variant="light"
            color={disabled ? 'green' : 'red'}
            disabled={self}
            aria-label={`${disabled ? 'Enable' : 'Disable'} ${u.username}`}
            title={`${disabled ? 'Enable' : 'Disable'} ${u.username}?`}
            message={disabled ? 'The account becomes usable again.' : 'Their sessions and tokens stop working at once; the account is kept for the audit trail.'}
            confirmLabel={disabled ? 'Enable' : 'Disable'}
            onConfirm={() => (disabled ? enable : disable).mutateAsync(u.id)}
          >
            {disabled ? 'Enable' : 'Disable'}
          </ConfirmButton>
          <ResetPasswordDialog user={u} self={self} />
          <Button size="compact-sm" variant="default" aria-label={`API tokens of ${u.username}`} onClick={onTokens}>
            Tokens
          </Button>
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}

export function UsersPage() {
  const { user } = useSession();
  const { params, set } = useUrlFilters();
  const paging = useUrlPaging();
  const users = useUsers({ q: params.get('q') || undefined, cursor: paging.cursor ?? undefined });
  const rows = users.data?.items ?? [];
  const [tokensOf, setTokensOf] = useState<User | null>(null);
  return (
    <RequireRole operation="listUsers" title="Users">
      <Stack>
        <PageHeader title="Users" />
        <CreateUserForm />
        <Group align="flex-end" role="search" aria-label="User filters">
          <SearchInput initial={params.get('q') ?? ''} placeholder="#id, username…" onSearch={(q) => set({ q })} />
        </Group>
        <QueryState
          isPending={users.isPending}
          onRetry={() => users.refetch()}
          error={users.error}
          isEmpty={rows.length === 0}
          empty={
            params.get('q') ? (
              <NoMatch text="No user matches this search." clearLabel="Clear the search" onClear={() => set({ q: null })} />
            ) : (
              'No users yet: create the first account with the form above; its role decides what it may do.'
            )
          }
        >
          <Table.ScrollContainer type="native" minWidth={720} tabIndex={0} aria-label="Users (scrollable)">
            <Table striped withTableBorder fz="sm" aria-label="Users">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Username</Table.Th>
                  <Table.Th>Role</Table.Th>
                  <Table.Th>State</Table.Th>
                  <Table.Th>Created</Table.Th>
                  <Table.Th>Last sign-in</Table.Th>
                  <Table.Th>Actions</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((u) => (
                  <UserRow key={u.id} u={u} self={u.id === user?.id} onTokens={() => setTokensOf(u)} />
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </QueryState>
        <CursorPager paging={paging} nextCursor={users.data?.next_cursor} />
        {tokensOf && <UserTokens key={tokensOf.id} user={tokensOf} onClose={() => setTokensOf(null)} />}
      </Stack>
    </RequireRole>
  );
}
