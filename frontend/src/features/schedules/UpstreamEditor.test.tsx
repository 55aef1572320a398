import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aSchedule } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { emptyScheduleForm, toScheduleBody, validateScheduleForm, type UpstreamRow } from './schedule-form';
import { UpstreamEditor } from './UpstreamEditor';

afterEach(() => vi.unstubAllGlobals());

let latest: UpstreamRow[] = [];

function Harness({ initial }: { initial: UpstreamRow[] }) {
  const [rows, setRows] = useState(initial);
  latest = rows;
  return <UpstreamEditor value={rows} onChange={setRows} project="default" selfId={3} />;
}

describe('upstream editor', () => {
  it('offers the other schedules of the project, never the schedule itself, and edits rows', async () => {
    vi.stubGlobal(
      'fetch',
      fakeApi(
        http.get('/api/v1/schedules', ({ response }) =>
          response(200).json({
            items: [aSchedule({ id: 1, name: 'extract' }), aSchedule({ id: 3, name: 'self' }), aSchedule({ id: 5, name: 'elsewhere', project: 'other' })],
            next_cursor: null,
          }),
        ),
      ).fetch,
    );
    renderScreen(<Harness initial={[]} />, { role: 'ADMIN' });
    await userEvent.click(screen.getByRole('button', { name: 'Add upstream schedule' }));
    const row = screen.getByRole('group', { name: 'Upstream 1' });
    await userEvent.click(within(row).getByRole('combobox', { name: 'Schedule' }));
    expect(await screen.findByRole('option', { name: 'extract (#1)' })).toBeInTheDocument();
    expect(screen.queryByRole('option', { name: 'self (#3)' })).toBeNull();
    expect(screen.queryByRole('option', { name: 'elsewhere (#5)' })).toBeNull();
    await userEvent.click(screen.getByRole('option', { name: 'extract (#1)' }));
    expect(latest).toEqual([{ schedule: 1, run_when: 'succeeded', wait_seconds: '' }]);
    await userEvent.click(screen.getByRole('button', { name: 'Remove upstream 1' }));
    expect(latest).toEqual([]);
  });

  it('validates rows and sends upstream in the body', () => {
    const base = { ...emptyScheduleForm(), name: 'load', handler: 'noop', timezone: 'UTC' };
    expect(validateScheduleForm({ ...base, upstream: [{ schedule: '', run_when: 'succeeded', wait_seconds: '' }] }).upstream).toMatch(/Choose a schedule/);
    const twice = { schedule: 1, run_when: 'succeeded', wait_seconds: '' } as const;
    expect(validateScheduleForm({ ...base, upstream: [twice, twice] }).upstream).toMatch(/twice/);
    const ok = { ...base, upstream: [{ schedule: 1, run_when: 'finished' as const, wait_seconds: 300 }] };
    expect(validateScheduleForm(ok)).toEqual({});
    expect(toScheduleBody(ok).upstream).toEqual([{ schedule: 1, run_when: 'finished', wait_seconds: 300 }]);
  });
});
