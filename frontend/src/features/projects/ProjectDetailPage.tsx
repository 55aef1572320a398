import { Alert, Anchor, Badge, Button, Group, NumberInput, Paper, Select, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ApiError } from '../../api/problem';
import { ROLES, type Project, type Quotas, type Role } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { ErrorAlert } from '../../components/ErrorAlert';
import { PageHeader } from '../../components/PageHeader';
import { ProjectGatedButton } from '../../components/ProjectGatedButton';
import { QueryState } from '../../components/QueryState';
import { useProjectScope } from '../../lib/project-scope';
import { roleAtLeast, roleFor } from '../../lib/roles';
import { useSession } from '../../lib/session';
import { useProject } from './api/get-project';
import { useMembers } from './api/list-members';
import { useCandidates } from './api/list-users';
import { useDeleteProject, useRemoveMember, useSetMember, useUpdateProject } from './api/project-mutations';
import { UsageBar } from './UsageBar';
import { UsageChart } from './UsageChart';

type QuotaName = keyof Quotas;
const QUOTAS: { name: QuotaName; label: string }[] = [
  { name: 'max_schedules', label: 'Max schedules' },
  { name: 'max_pending_jobs', label: 'Max pending jobs' },
  { name: 'enqueue_per_minute', label: 'Enqueues per minute' },
];

function QuotasCard({ project, canEdit }: { project: Project; canEdit: boolean }) {
  const update = useUpdateProject();
  const [editing, setEditing] = useState(false);
  const [values, setValues] = useState<Record<QuotaName, number | string>>({ max_schedules: '', max_pending_jobs: '', enqueue_per_minute: '' });
  const fields = update.error instanceof ApiError ? update.error.fieldErrors : {};
  const start = () => {
    update.reset();
    setValues({
      max_schedules: project.quotas.max_schedules ?? '',
      max_pending_jobs: project.quotas.max_pending_jobs ?? '',
      enqueue_per_minute: project.quotas.enqueue_per_minute ?? '',
    });
    setEditing(true);
  };
  const save = (e: FormEvent) => {
    e.preventDefault();
    const quotas: Quotas = {};
    for (const q of QUOTAS) quotas[q.name] = values[q.name] === '' ? null : Number(values[q.name]);
    update.mutate({ slug: project.slug, body: { quotas } }, { onSuccess: () => setEditing(false) });
  };
  return (
    <Paper withBorder p="md">
      <Group justify="space-between" mb="sm">
        <Title order={2} size="h5">
          Quotas and current usage
        </Title>
        {canEdit && !editing && (
          <Button size="compact-sm" variant="light" onClick={start}>
            Edit quotas
          </Button>
        )}
      </Group>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <UsageBar label="Schedules" used={project.usage.schedules} limit={project.quotas.max_schedules} />
        <UsageBar label="Pending jobs" used={project.usage.pending_jobs} limit={project.quotas.max_pending_jobs} />
        <UsageBar label="Enqueued in the last minute" used={project.usage.enqueued_last_minute} limit={project.quotas.enqueue_per_minute} />
      </SimpleGrid>
      {editing && (
        <form onSubmit={save} aria-label="Edit quotas">
          <Group align="flex-start" mt="md">
            {QUOTAS.map((q) => (
              <NumberInput
                key={q.name}
                label={q.label}
                placeholder="unlimited"
                min={0}
                allowNegative={false}
                allowDecimal={false}
                value={values[q.name]}
                onChange={(v) => setValues((old) => ({ ...old, [q.name]: v }))}
                error={fields[`quotas.${q.name}`] ?? fields[q.name]}
              />
            ))}
            <Group mt={25}>
              <Button type="submit" loading={update.isPending}>
                Save quotas
              </Button>
              <Button variant="default" onClick={() => setEditing(false)}>
                Cancel
              </Button>
            </Group>
          </Group>
          <ErrorAlert error={update.error} hideFields />
        </form>
      )}
    </Paper>
  );
}

function AddMember({ slug, instanceAdmin }: { slug: string; instanceAdmin: boolean }) {
  const candidates = useCandidates(instanceAdmin);
  const setMember = useSetMember(slug);
  const [userId, setUserId] = useState<string | number | null>(null);
  const [role, setRole] = useState<Role>('VIEWER');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (userId == null || userId === '') return;
    setMember.mutate({ userId: Number(userId), role }, { onSuccess: () => setUserId(null) });
  };
  return (
    <form onSubmit={submit} aria-label="Add member">
      <Group align="flex-end">
        {instanceAdmin ? (
          <Select
            label="User"
            searchable
            w={220}
            data={(candidates.data ?? []).map((u) => ({ value: String(u.id), label: u.username }))}
            value={userId == null ? null : String(userId)}
            onChange={setUserId}
          />
        ) : (
          <NumberInput label="User id" w={140} min={1} value={userId ?? ''} onChange={(v) => setUserId(v)} />
        )}
        <Select label="Role" w={140} allowDeselect={false} data={ROLES} value={role} onChange={(r) => r && setRole(r as Role)} />
        <ProjectGatedButton project={slug} operation="setProjectMember" type="submit" loading={setMember.isPending}>
          Add member
        </ProjectGatedButton>
      </Group>
      <ErrorAlert error={setMember.error} />
    </form>
  );
}

function Members({ slug, canManage, instanceAdmin }: { slug: string; canManage: boolean; instanceAdmin: boolean }) {
  const members = useMembers(slug);
  const setMember = useSetMember(slug);
  const remove = useRemoveMember(slug);
  const rows = members.data ?? [];
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h5" mb="sm">
        Members
      </Title>
      <Stack>
        {canManage && <AddMember slug={slug} instanceAdmin={instanceAdmin} />}
        {/* The last ADMIN can neither leave nor be demoted: the API answers 409 and says so here. */}
        <ErrorAlert error={setMember.error ?? remove.error} />
        <QueryState isPending={members.isPending} error={members.error} isEmpty={rows.length === 0} empty="No members yet (instance ADMINs are ADMIN everywhere).">
          <Table striped withTableBorder fz="sm" aria-label="Members">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>User</Table.Th>
                <Table.Th>Role in this project</Table.Th>
                {canManage && <Table.Th>Actions</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((m) => (
                <Table.Tr key={m.user_id} data-member={m.username}>
                  <Table.Td>{m.username}</Table.Td>
                  {/* Who may not manage members reads the role, with no greyed select and no
                      empty Actions column (review 2026-12-05 §5.15). */}
                  <Table.Td>
                    {canManage ? (
                      <Select
                        aria-label={`Role of ${m.username}`}
                        size="xs"
                        w={130}
                        allowDeselect={false}
                        data={ROLES}
                        value={m.role}
                        disabled={setMember.isPending}
                        onChange={(r) => r && r !== m.role && setMember.mutate({ userId: m.user_id, role: r as Role })}
                      />
                    ) : (
                      <Text size="sm" data-testid="member-role">
                        {m.role}
                      </Text>
                    )}
                  </Table.Td>
                  {canManage && (
                    <Table.Td>
                      <ConfirmButton
                        requiredRole="VIEWER" // shown only when canManage
                        size="compact-sm"
                        variant="light"
                        color="red"
                        aria-label={`Remove ${m.username}`}
                        title={`Remove ${m.username} from ${slug}?`}
                        message="They stop seeing this project's schedules and jobs at once; their tokens for it stop working."
                        confirmLabel="Remove"
                        onConfirm={() => remove.mutateAsync(m.user_id)}
                      >
                        Remove
                      </ConfirmButton>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </QueryState>
      </Stack>
    </Paper>
  );
}

function Lifecycle({ project }: { project: Project }) {
  const update = useUpdateProject();
  const remove = useDeleteProject();
  const navigate = useNavigate();
  const { setProject } = useProjectScope();
  if (project.slug === 'default') return null;
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h5" mb="sm">
        Archive or delete
      </Title>
      <Group>
        <ConfirmButton
          requiredRole="VIEWER" // the section is for instance ADMINs (see below)
          variant="light"
          color="gray"
          title={project.archived ? `Unarchive ${project.slug}?` : `Archive ${project.slug}?`}
          message={project.archived ? 'It takes new schedules and jobs again.' : 'It takes no new schedules or jobs; what exists stays readable.'}
          confirmLabel={project.archived ? 'Unarchive' : 'Archive'}
          onConfirm={() => update.mutateAsync({ slug: project.slug, body: { archived: !project.archived } })}
        >
          {project.archived ? 'Unarchive' : 'Archive'}
        </ConfirmButton>
        <ConfirmButton
          requiredRole="VIEWER" // the section is for instance ADMINs (see below)
          variant="light"
          color="red"
          title={`Delete ${project.slug}?`}
          message="Only an empty project can be deleted; one with schedules, jobs or their history is refused (archive it instead)."
          confirmLabel="Delete"
          onConfirm={async () => {
            await remove.mutateAsync(project.slug);
            setProject(null);
            navigate('/projects');
          }}
        >
          Delete
        </ConfirmButton>
      </Group>
    </Paper>
  );
}

/** One project: quotas with their usage, members (its ADMINs manage them), archive and delete
 * (instance ADMINs). */
export function ProjectDetailPage() {
  const { slug = '' } = useParams();
  const { user } = useSession();
  const project = useProject(slug);
  const instanceAdmin = roleAtLeast(user?.role, roleFor('updateProject'));
  const canManage = instanceAdmin || project.data?.role === 'ADMIN';
  return (
    <Stack>
      <PageHeader
        // The title is JSX (the archived badge): name the tab in words (review §5.15: it said "cronplane").
        documentTitle={`Project ${project.data?.name ?? slug}`}
        title={
          <>
            Project {project.data?.name ?? slug}{' '}
            {project.data?.archived && (
              <Badge color="gray" size="lg">
                archived
              </Badge>
            )}
          </>
        }
      />
      {/* The project's own work, in its scope (review §5.15: the page led nowhere). */}
      <Group component="nav" gap="md" aria-label="This project's work" mt={-8}>
        {(['schedules', 'jobs', 'queues'] as const).map((page) => (
          <Anchor key={page} component={Link} to={`/${page}?project=${encodeURIComponent(slug)}`} size="sm">
            {page[0]!.toUpperCase() + page.slice(1)}
          </Anchor>
        ))}
      </Group>
      <QueryState isPending={project.isPending} error={project.error}>
        {project.data && (
          <>
            {project.data.archived && (
              <Alert color="gray" title="Archived">
                This project takes no new schedules or jobs.
              </Alert>
            )}
            <QuotasCard project={project.data} canEdit={instanceAdmin} />
            {canManage && <UsageChart slug={slug} />}
            <Members slug={slug} canManage={canManage} instanceAdmin={instanceAdmin} />
            {instanceAdmin && <Lifecycle project={project.data} />}
          </>
        )}
      </QueryState>
    </Stack>
  );
}
