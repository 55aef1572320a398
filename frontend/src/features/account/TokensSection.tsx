import { Alert, Button, Code, CopyButton, Group, Paper, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/problem';
import { useProjects } from '../../api/queries/list-projects';
import { ROLES, type ApiToken, type ApiTokenCreated, type Role } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { CursorPager } from '../../components/CursorPager';
import { ErrorAlert } from '../../components/ErrorAlert';
import { QueryState } from '../../components/QueryState';
import { TokenCells, TokenHeaderCells } from '../../components/TokenColumns';
import { roleAtLeast } from '../../lib/roles';
import { useUrlPaging } from '../../lib/search-params';
import { useCreateToken } from './api/create-token';
import { useDeleteToken } from './api/delete-token';
import { useTokens } from './api/list-tokens';

const EVERY_PROJECT = '__every__';
const NEVER = 'never';
// Presets rather than a date picker: a token's lifetime is a policy choice, rarely a date.
const EXPIRIES = [
  { value: NEVER, label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In a year' },
];
const DAY_MS = 24 * 60 * 60 * 1000;

/** The secret of a token just made: the only time the console (or anyone) can show it. */
function NewSecret({ created, onDone }: { created: ApiTokenCreated; onDone: () => void }) {
  return (
    // A region, not a live one: a screen reader should not read the secret out unasked.
    <Alert color="blue" title={`Copy the secret of ${created.name} now`} role="region">
      <Stack gap="xs">
        <Text size="sm" fw={600}>
          You will not see this secret again: the server keeps only a hash of it.
        </Text>
        <Text size="sm">
          Scripts send it as <Code>Authorization: Bearer …</Code>; it acts as {created.role}
          {created.project ? ` in project ${created.project} only` : ' in your projects'}.
        </Text>
        <Code block style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>
          {created.token}
        </Code>
        <Group gap="xs">
          <CopyButton value={created.token}>
            {({ copied, copy }) => (
              <Button size="xs" color={copied ? 'teal' : undefined} onClick={copy}>
                {copied ? 'Copied' : 'Copy token'}
              </Button>
            )}
          </CopyButton>
          <Button size="xs" variant="default" onClick={onDone}>
            I have saved it
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}

function CreateTokenForm({ myRole, onCreated }: { myRole: Role; onCreated: (t: ApiTokenCreated) => void }) {
  const create = useCreateToken();
  const projects = useProjects();
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>(myRole);
  const [project, setProject] = useState(EVERY_PROJECT);
  const [expiry, setExpiry] = useState(NEVER);
  const fields = create.error instanceof ApiError ? create.error.fieldErrors : {};
  const roles = ROLES.filter((r) => roleAtLeast(myRole, r));
  const projectChoices = [
    { value: EVERY_PROJECT, label: 'Every project of yours' },
    ...(projects.data ?? []).map((p) => ({ value: p.slug, label: `${p.name} (${p.slug})` })),
  ];
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(
      {
        name,
        role,
        ...(project === EVERY_PROJECT ? {} : { project }),
        ...(expiry === NEVER ? {} : { expires_at: new Date(Date.now() + Number(expiry) * DAY_MS).toISOString() }),
      },
      {
        onSuccess: (token) => {
          setName('');
          onCreated(token);
        },
      },
    );
  };
  return (
    <form onSubmit={submit} aria-label="New API token">
      <Stack gap="sm">
        <Group align="flex-start" wrap="wrap">
          <TextInput label="Name" required description="What uses it, e.g. nightly-ci" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fields.name} w={{ base: '100%', sm: 220 }} />
          <Select label="Role" description="At most yours" allowDeselect={false} data={roles} value={role} onChange={(r) => r && setRole(r as Role)} error={fields.role} w={{ base: '100%', sm: 150 }} />
          <Select label="Project" description="Where it may act" allowDeselect={false} data={projectChoices} value={project} onChange={(p) => p && setProject(p)} error={fields.project} w={{ base: '100%', sm: 220 }} />
          <Select label="Expires" description="It stops working then" allowDeselect={false} data={EXPIRIES} value={expiry} onChange={(x) => x && setExpiry(x)} error={fields.expires_at} w={{ base: '100%', sm: 150 }} />
        </Group>
        <ErrorAlert error={create.error} hideFields />
        <Group>
          <Button type="submit" loading={create.isPending}>
            Create token
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function TokenRow({ token }: { token: ApiToken }) {
  const remove = useDeleteToken();
  return (
    <Table.Tr data-token={token.name}>
      <TokenCells token={token} />
      <Table.Td>
        <ConfirmButton
          operation="deleteToken"
          size="compact-sm"
          variant="light"
          color="red"
          aria-label={`Delete token ${token.name}`}
          title={`Delete token ${token.name}?`}
          message="Scripts that use it get 401 from their next request. This cannot be undone."
          confirmLabel="Delete token"
          onConfirm={() => remove.mutateAsync(token.id)}
        >
          Delete
        </ConfirmButton>
      </Table.Td>
    </Table.Tr>
  );
}

/** Your API tokens: make one (the secret once), see when each was last used, delete one. */
export function TokensSection({ myRole, isPersona = false }: { myRole: Role; isPersona?: boolean }) {
  const paging = useUrlPaging('tokens_');
  const tokens = useTokens(paging.cursor ?? undefined);
  const [created, setCreated] = useState<ApiTokenCreated | null>(null);
  const rows = tokens.data?.items ?? [];
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="tokens-heading">
      <Stack>
        <div>
          <Title order={2} size="h4" id="tokens-heading">
            API tokens
          </Title>
          <Text size="sm" c="dimmed">
            For scripts and CI: each acts as you, with at most the role you give it. Last use is recorded to the minute.
          </Text>
        </div>
        {created && <NewSecret created={created} onDone={() => setCreated(null)} />}
        {isPersona ? (
          <Text size="sm">Demo personas cannot create API tokens: a token would outlive the demo.</Text>
        ) : (
          <CreateTokenForm myRole={myRole} onCreated={setCreated} />
        )}
        <QueryState
          isPending={tokens.isPending}
          error={tokens.data ? null : tokens.error}
          onRetry={() => tokens.refetch()}
          isEmpty={rows.length === 0}
          empty={isPersona ? 'No API tokens.' : 'No API tokens yet. Create one above for a script or a CI job; you will see its secret once.'}
        >
          <Table.ScrollContainer type="native" minWidth={760} tabIndex={0} aria-label="API tokens (scrollable)">
            <Table striped withTableBorder fz="sm" aria-label="API tokens">
              <Table.Thead>
                <Table.Tr>
                  <TokenHeaderCells />
                  <Table.Th>Actions</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((t) => (
                  <TokenRow key={t.id} token={t} />
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </QueryState>
        <CursorPager paging={paging} nextCursor={tokens.data?.next_cursor} />
      </Stack>
    </Paper>
  );
}
