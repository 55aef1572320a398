import { Badge, Button, Group, Paper, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { ApiError } from '../../api/problem';
import { useProjects } from '../../api/queries/list-projects';
import type { Project } from '../../api/types';
import { ErrorAlert } from '../../components/ErrorAlert';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { roleAtLeast, roleFor } from '../../lib/roles';
import { useSession } from '../../lib/session';
import { useCreateProject } from './api/project-mutations';
import { UsageBar } from './UsageBar';

function CreateProjectForm() {
  const create = useCreateProject();
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  const fields = create.error instanceof ApiError ? create.error.fieldErrors : {};
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(
      { slug, name },
      {
        onSuccess: () => {
          setSlug('');
          setName('');
        },
      },
    );
  };
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h5" mb="sm">
        Create project
      </Title>
      <form onSubmit={submit} aria-label="Create project">
        <Group align="flex-start">
          <TextInput label="Slug" description="a-z, 0-9 and -, at most 40" required value={slug} onChange={(e) => setSlug(e.currentTarget.value)} error={fields.slug} />
          <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} error={fields.name} />
          <Button type="submit" mt={25} loading={create.isPending}>
            Create
          </Button>
        </Group>
        <ErrorAlert error={create.error} hideFields />
      </form>
    </Paper>
  );
}

function ProjectRow({ p }: { p: Project }) {
  return (
    <Table.Tr data-project={p.slug}>
      <Table.Td>
        <Link to={`/projects/${encodeURIComponent(p.slug)}?project=${encodeURIComponent(p.slug)}`}>{p.name}</Link>{' '}
        <Text span size="xs" c="dimmed">
          {p.slug}
        </Text>{' '}
        {p.archived && (
          <Badge size="xs" color="gray">
            archived
          </Badge>
        )}
      </Table.Td>
      <Table.Td>
        <Badge size="sm">{p.role}</Badge>
      </Table.Td>
      <Table.Td miw={160}>
        <UsageBar label="Schedules" used={p.usage.schedules} limit={p.quotas.max_schedules} />
      </Table.Td>
      <Table.Td miw={160}>
        <UsageBar label="Pending jobs" used={p.usage.pending_jobs} limit={p.quotas.max_pending_jobs} />
      </Table.Td>
      <Table.Td miw={160}>
        <UsageBar label="Enqueued / min" used={p.usage.enqueued_last_minute} limit={p.quotas.enqueue_per_minute} />
      </Table.Td>
    </Table.Tr>
  );
}

/** Your projects with your role and their quotas' current usage; instance ADMINs create them. */
export function ProjectsPage() {
  const { user } = useSession();
  const projects = useProjects();
  const rows = projects.data ?? [];
  return (
    <Stack>
      <PageHeader title="Projects" />
      {roleAtLeast(user?.role, roleFor('createProject')) && <CreateProjectForm />}
      <QueryState isPending={projects.isPending} error={projects.error} onRetry={() => projects.refetch()} isEmpty={rows.length === 0} empty="You are not a member of any project.">
        <Table.ScrollContainer type="native" minWidth={720} tabIndex={0} aria-label="Projects (scrollable)">
          <Table striped withTableBorder fz="sm" aria-label="Projects">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Project</Table.Th>
                <Table.Th>Your role</Table.Th>
                <Table.Th>Schedules</Table.Th>
                <Table.Th>Pending jobs</Table.Th>
                <Table.Th>Enqueue rate</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((p) => (
                <ProjectRow key={p.slug} p={p} />
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
    </Stack>
  );
}
