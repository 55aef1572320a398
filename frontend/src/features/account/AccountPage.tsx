import { Badge, Code, List, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { meQueryOptions } from '../../api/queries/get-me';
import { useProjects } from '../../api/queries/list-projects';
import type { Me } from '../../api/types';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { PasswordSection } from './PasswordSection';
import { TokensSection } from './TokensSection';

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" component="dt">
        {label}
      </Text>
      <Text size="sm" component="dd" m={0} style={{ overflowWrap: 'anywhere' }}>
        {children}
      </Text>
    </div>
  );
}

function Memberships({ me }: { me: Me }) {
  const projects = useProjects();
  const rows = projects.data ?? [];
  return (
    <div>
      <Title order={3} size="h6" mb={4}>
        Projects
      </Title>
      {me.role === 'ADMIN' && (
        <Text size="sm" mb={4}>
          As an instance ADMIN you are ADMIN in every project.
        </Text>
      )}
      <QueryState
        isPending={projects.isPending}
        error={projects.data ? null : projects.error}
        onRetry={() => projects.refetch()}
        isEmpty={rows.length === 0}
        empty="You are a member of no project: an administrator adds you to one."
      >
        <List size="sm" aria-label="Your projects">
          {rows.map((p) => (
            <List.Item key={p.slug}>
              {p.name} <Code>{p.slug}</Code> — {p.role}
              {p.archived ? ' (archived)' : ''}
            </List.Item>
          ))}
        </List>
      </QueryState>
    </div>
  );
}

function WhoYouAre({ me }: { me: Me }) {
  const identity = me.identity && 'issuer' in me.identity ? me.identity : null;
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="who-heading">
      <Stack>
        <Title order={2} size="h4" id="who-heading">
          Who you are
        </Title>
        <SimpleGrid cols={{ base: 1, sm: 3 }} component="dl" m={0}>
          <Fact label="Username">{me.username}</Fact>
          <Fact label="Role">
            <Badge size="sm">{me.role}</Badge>
            {me.is_persona && (
              <Badge size="sm" color="grape" ml={6}>
                demo persona
              </Badge>
            )}
          </Fact>
          <Fact label="Signs in with">{identity ? `the identity provider ${identity.issuer}` : me.is_persona ? 'one click (demo)' : 'a password (local account)'}</Fact>
          {identity && <Fact label="Subject at the provider">{identity.subject}</Fact>}
          {identity && <Fact label="Groups at the last sign-in">{(identity.groups ?? []).join(', ') || 'none'}</Fact>}
        </SimpleGrid>
        <Memberships me={me} />
      </Stack>
    </Paper>
  );
}

/** The signed-in user's own page: who they are, their API tokens, their password. */
export function AccountPage() {
  // Read afresh: after a sign-in the cache holds the login answer's user, which lacks what only
  // `/auth/me` says (the provider identity, whether a password can be changed here).
  const me = useQuery({ ...meQueryOptions(), refetchOnMount: 'always' });
  const cached = me.data as Partial<Me> | null | undefined;
  const data = cached && cached.can_change_password !== undefined ? (cached as Me) : null;
  return (
    <Stack>
      <PageHeader title="Your account" documentTitle="Account" />
      <QueryState isPending={me.isPending || (!data && me.isFetching)} error={me.error} onRetry={() => me.refetch()}>
        {data && (
          <>
            <WhoYouAre me={data} />
            {data.role !== null && <TokensSection myRole={data.role} isPersona={Boolean(data.is_persona)} />}
            <PasswordSection me={data} />
          </>
        )}
      </QueryState>
    </Stack>
  );
}
