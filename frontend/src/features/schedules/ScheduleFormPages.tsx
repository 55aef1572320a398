import { Alert, Button } from '@mantine/core';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { ApiError } from '../../api/problem';
import type { CronFieldComponent } from '../../components/cron-field';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { RequireRole } from '../../components/RequireRole';
import { useProjectScope } from '../../lib/project-scope';
import { useCreateSchedule } from './api/create-schedule';
import { useSchedule } from './api/get-schedule';
import { useUpdateSchedule } from './api/update-schedule';
import { emptyScheduleForm, formFromSchedule, toScheduleBody } from './schedule-form';
import { ScheduleForm } from './ScheduleForm';

export function NewSchedulePage({ CronField }: { CronField: CronFieldComponent }) {
  const navigate = useNavigate();
  const create = useCreateSchedule();
  const scope = useProjectScope();
  const choices = scope.projects.filter((p) => p.role === 'ADMIN' && !p.archived).map((p) => p.slug);
  const initialProject = scope.project ?? (choices.includes('default') ? 'default' : choices[0]) ?? 'default';
  return (
    <RequireRole operation="createSchedule">
      <PageHeader title="New schedule" />
      <ScheduleForm
        initial={{ ...emptyScheduleForm(), project: initialProject }}
        projectChoices={choices.length ? [...new Set([initialProject, ...choices])] : undefined}
        CronField={CronField}
        submitLabel="Create schedule"
        pending={create.isPending}
        error={create.error}
        onSubmit={(v) => create.mutate({ ...toScheduleBody(v), project: v.project }, { onSuccess: (s) => navigate(`/schedules/${s.id}`) })}
      />
    </RequireRole>
  );
}

export function EditSchedulePage({ CronField }: { CronField: CronFieldComponent }) {
  const id = Number(useParams().id);
  const navigate = useNavigate();
  const schedule = useSchedule(id);
  const update = useUpdateSchedule();
  // The version the user started editing from: a background refetch must neither reset the form nor
  // move If-Match forward, so someone else's edit in between is a 412, not a silent overwrite.
  const [baseVersion, setBaseVersion] = useState<number | null>(null);
  const [formKey, setFormKey] = useState(0);
  if (baseVersion === null && schedule.data) setBaseVersion(schedule.data.version);
  const conflict = update.error instanceof ApiError && update.error.status === 412;
  const loadLatest = async () => {
    const latest = await schedule.refetch();
    if (latest.data) setBaseVersion(latest.data.version);
    update.reset();
    setFormKey((k) => k + 1);
  };
  return (
    <RequireRole operation="updateSchedule">
      <PageHeader title={schedule.data ? `Edit ${schedule.data.name}` : 'Edit schedule'} />
      <QueryState isPending={schedule.isPending} error={schedule.error}>
        {schedule.data?.deleted_at && <Alert color="yellow">This schedule was deleted; it cannot be edited.</Alert>}
        {conflict && (
          <Alert color="orange" title="Someone else changed this schedule" mb="md" role="alert">
            Your changes were not saved. <Button size="xs" variant="light" onClick={loadLatest}>Load the latest version</Button>{' '}
            (your edits in this form are discarded).
          </Alert>
        )}
        {schedule.data && !schedule.data.deleted_at && (
          <ScheduleForm
            key={`${schedule.data.id}:${formKey}`}
            initial={formFromSchedule(schedule.data)}
            CronField={CronField}
            submitLabel="Save schedule"
            pending={update.isPending}
            error={update.error}
            onSubmit={(v) =>
              update.mutate(
                { id, version: baseVersion ?? schedule.data.version, body: toScheduleBody(v) },
                { onSuccess: () => navigate(`/schedules/${id}`) },
              )
            }
          />
        )}
      </QueryState>
    </RequireRole>
  );
}
