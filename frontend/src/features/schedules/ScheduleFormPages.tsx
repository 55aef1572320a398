import { Alert } from '@mantine/core';
import { useNavigate, useParams } from 'react-router';
import type { CronFieldComponent } from '../../components/cron-field';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { RequireRole } from '../../components/RequireRole';
import { useCreateSchedule } from './api/create-schedule';
import { useSchedule } from './api/get-schedule';
import { useUpdateSchedule } from './api/update-schedule';
import { emptyScheduleForm, formFromSchedule, toScheduleBody } from './schedule-form';
import { ScheduleForm } from './ScheduleForm';

export function NewSchedulePage({ CronField }: { CronField: CronFieldComponent }) {
  const navigate = useNavigate();
  const create = useCreateSchedule();
  return (
    <RequireRole role="ADMIN">
      <PageHeader title="New schedule" />
      <ScheduleForm
        initial={emptyScheduleForm()}
        CronField={CronField}
        submitLabel="Create schedule"
        pending={create.isPending}
        error={create.error}
        onSubmit={(v) => create.mutate(toScheduleBody(v), { onSuccess: (s) => navigate(`/schedules/${s.id}`) })}
      />
    </RequireRole>
  );
}

export function EditSchedulePage({ CronField }: { CronField: CronFieldComponent }) {
  const id = Number(useParams().id);
  const navigate = useNavigate();
  const schedule = useSchedule(id);
  const update = useUpdateSchedule();
  return (
    <RequireRole role="ADMIN">
      <PageHeader title={schedule.data ? `Edit ${schedule.data.name}` : 'Edit schedule'} />
      <QueryState isPending={schedule.isPending} error={schedule.error}>
        {schedule.data?.deleted_at && <Alert color="yellow">This schedule was deleted; it cannot be edited.</Alert>}
        {schedule.data && !schedule.data.deleted_at && (
          <ScheduleForm
            key={schedule.data.version}
            initial={formFromSchedule(schedule.data)}
            CronField={CronField}
            submitLabel="Save schedule"
            pending={update.isPending}
            error={update.error}
            onSubmit={(v) =>
              update.mutate(
                { id, version: schedule.data.version, body: toScheduleBody(v) },
                { onSuccess: () => navigate(`/schedules/${id}`) },
              )
            }
          />
        )}
      </QueryState>
    </RequireRole>
  );
}
