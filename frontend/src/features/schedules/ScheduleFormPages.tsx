import { Alert } from '@mantine/core';
import { useEffect, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { ApiError } from '../../api/problem';
import type { ScheduleUpdate } from '../../api/types';
import { ConflictDialog } from './ConflictDialog';
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
    <RequireRole operation="createSchedule" title="New schedule">
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
  // The body last sent: after a 412 it is "yours" in the conflict dialog, and what an overwrite sends.
  const [mine, setMine] = useState<ScheduleUpdate | null>(null);
  const conflict = update.error instanceof ApiError && update.error.status === 412;
  const { refetch } = schedule;
  useEffect(() => {
    if (conflict) void refetch();
  }, [conflict, refetch]);
  const save = (body: ScheduleUpdate, version: number) => {
    setMine(body);
    update.mutate({ id, version, body }, { onSuccess: () => navigate(`/schedules/${id}`) });
  };
  const loadLatest = async () => {
    const latest = await schedule.refetch();
    if (latest.data) setBaseVersion(latest.data.version);
    update.reset();
    setFormKey((k) => k + 1);
  };
  return (
    <RequireRole operation="updateSchedule" title={schedule.data ? `Edit ${schedule.data.name}` : 'Edit schedule'}>
      <PageHeader title={schedule.data ? `Edit ${schedule.data.name}` : 'Edit schedule'} />
      <QueryState isPending={schedule.isPending} onRetry={() => schedule.refetch()} error={schedule.error}>
        {schedule.data?.deleted_at && <Alert color="yellow">This schedule was deleted; it cannot be edited.</Alert>}
        {conflict && mine && schedule.data && (
          <ConflictDialog
            mine={mine}
            theirs={schedule.data}
            pending={update.isPending || schedule.isFetching}
            onUseTheirs={loadLatest}
            onOverwrite={() => {
              if (schedule.data) save(mine, schedule.data.version);
            }}
            onClose={() => update.reset()}
          />
        )}
        {schedule.data && !schedule.data.deleted_at && (
          <ScheduleForm
            key={`${schedule.data.id}:${formKey}`}
            initial={formFromSchedule(schedule.data)}
            scheduleId={schedule.data.id}
            CronField={CronField}
            submitLabel="Save schedule"
            pending={update.isPending}
            // The conflict dialog is the message for a 412: a red "Precondition failed" box behind
            // it said the same thing worse (review 2026-12-05 §5.14).
            error={conflict ? null : update.error}
            onSubmit={(v) => save(toScheduleBody(v), baseVersion ?? schedule.data.version)}
          />
        )}
      </QueryState>
    </RequireRole>
  );
}
