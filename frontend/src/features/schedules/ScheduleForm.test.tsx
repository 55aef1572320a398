import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CronFieldProps } from '../../components/cron-field';
import { aHandler, aProblem, aSchedule } from '../../test/factories';
import { fill, fakeApi, http, renderScreen } from '../../test/render';
import { emptyScheduleForm, validateScheduleForm } from './schedule-form';
import { EditSchedulePage, NewSchedulePage } from './ScheduleFormPages';

const sleepSchema = { type: 'object', properties: { seconds: { type: 'number', minimum: 0 } }, required: ['seconds'], additionalProperties: false };
const handlers = [
  aHandler({ name: 'noop', description: 'does nothing', payload_schema: { type: 'object' } }),
  aHandler({ name: 'sleep', description: 'sleeps', payload_schema: sleepSchema }),
];
const getHandlers = http.get('/api/v1/handlers', ({ response }) => response(200).json(handlers));
const noChannels = http.get('/api/v1/notification-channels', ({ response }) => response(200).json({ items: [], next_cursor: null }));

// A plain stand-in for the cron builder: the form must only rely on the slot's contract.
function CronStub({ expression, timezone, onChange, error }: CronFieldProps) {
  return (
    <>
      <label>
        Cron stub
        <input value={expression} onChange={(e) => onChange({ expression: e.currentTarget.value, timezone })} />
      </label>
      {error && <p>{error}</p>}
    </>
  );
}

afterEach(() => vi.unstubAllGlobals());

describe('schedule form validation', () => {
  const valid = { ...emptyScheduleForm(), name: 'nightly', handler: 'noop', timezone: 'Europe/Berlin' };

  it('accepts a complete form', () => {
    expect(validateScheduleForm(valid)).toEqual({});
  });

  it.each([
    [{ name: '  ' }, 'name', 'Name is required'],
    [{ handler: '' }, 'handler', 'Choose a handler'],
    [{ cron: '0 0 25 * * *' }, 'cron', 'field 3 (hour): 25 is out of range 0–23'],
    [{ cron: '0 0 12 ? * MON' }, 'cron', 'field 4 (day of month)'],
    [{ timezone: 'Mars/Olympus' }, 'timezone', 'not an IANA time zone'],
    [{ payload: '{"a":' }, 'payload', 'Not valid JSON'],
    [{ payload: '[1]' }, 'payload', 'must be a JSON object'],
    [{ priority: 101 }, 'priority', '−100 to 100'],
    [{ max_attempts: 0 }, 'max_attempts', '1 to 100'],
    [{ timeout_seconds: 1.5 }, 'timeout_seconds', 'whole number'],
  ] as const)('rejects %j with a message on %s', (change, field, message) => {
    const errors = validateScheduleForm({ ...valid, ...change });
    expect(errors[field]).toContain(message);
  });

  it("checks the payload against the handler's schema", () => {
    expect(validateScheduleForm({ ...valid, handler: 'sleep', payload: '{"seconds": -1}' }, sleepSchema).payload).toContain('seconds must be ≥ 0');
    expect(validateScheduleForm({ ...valid, handler: 'sleep', payload: '{}' }, sleepSchema).payload).toContain('seconds is required');
    expect(validateScheduleForm({ ...valid, handler: 'sleep', payload: '{"seconds": 2}' }, sleepSchema)).toEqual({});
  });
});

describe('new schedule page', () => {
  it('shows field errors beside the fields and sends nothing while invalid', async () => {
    const fake = fakeApi(getHandlers);
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<NewSchedulePage CronField={CronStub} />, { role: 'ADMIN' });
    const cron = screen.getByLabelText('Cron stub');
    await userEvent.clear(cron);
    await fill(cron, '0 0 25 * * *');
    await userEvent.click(screen.getByRole('button', { name: 'Create schedule' }));
    expect(await screen.findByText('Name is required')).toBeInTheDocument();
    expect(screen.getByText('field 3 (hour): 25 is out of range 0–23')).toBeInTheDocument();
    expect(fake.calls.filter((c) => c.method === 'POST')).toHaveLength(0);
  });

  it("shows the server's problem detail and field errors", async () => {
    const fake = fakeApi(
      getHandlers,
      noChannels,
      http.post('/api/v1/schedules', ({ response }) =>
        response(409).json(aProblem(409, 'A live schedule named nightly exists', { name: ['already taken'] }))),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<NewSchedulePage CronField={CronStub} />, { role: 'ADMIN' });
    await fill(screen.getByRole('textbox', { name: 'Name' }), 'nightly');
    await userEvent.click(screen.getByRole('combobox', { name: 'Handler' }));
    await userEvent.click(await screen.findByRole('option', { name: 'noop' }));
    await userEvent.click(screen.getByRole('button', { name: 'Create schedule' }));
    expect(await screen.findByText('A live schedule named nightly exists')).toBeInTheDocument();
    expect(screen.getByText('already taken')).toBeInTheDocument();
    const body = await fake.calls.find((c) => c.method === 'POST')?.json();
    expect(body).toMatchObject({ name: 'nightly', handler: 'noop', cron: '0 0 9 * * *' });
  });

  it('is not offered to an OPERATOR', () => {
    vi.stubGlobal('fetch', fakeApi(getHandlers).fetch);
    renderScreen(<NewSchedulePage CronField={CronStub} />, { role: 'OPERATOR' });
    expect(screen.getByRole('alert')).toHaveTextContent('Requires the ADMIN role');
    expect(screen.queryByRole('button', { name: 'Create schedule' })).toBeNull();
  });
});

describe('edit schedule page', () => {
  const schedule = aSchedule({ id: 3, name: 'nightly', timezone: 'Europe/Berlin', next_run_at: null, version: 4 });

  const conflicting = () => {
    let version = 4;
    let description = '';
    const fake = fakeApi(
      getHandlers,
      noChannels,
      http.get('/api/v1/schedules/{schedule_id}', ({ response }) => response(200).json({ ...schedule, version, description })),
      http.patch('/api/v1/schedules/{schedule_id}', ({ request, response }) => {
        if (request.headers.get('If-Match') === '"4"') {
          version = 5; // someone else saved first
          description = 'edited by olga';
          return response(412).json(aProblem(412, 'The schedule changed since you loaded it (version 5)'));
        }
        return response(200).json({ ...schedule, version: 6, name: 'nightly-v2' });
      }),
    );
    vi.stubGlobal('fetch', fake.fetch);
    return fake;
  };

  const saveAConflictingEdit = async () => {
    renderScreen(<EditSchedulePage CronField={CronStub} />, { role: 'ADMIN', path: '/schedules/:id/edit', route: '/schedules/3/edit' });
    const name = await screen.findByRole('textbox', { name: 'Name' });
    expect(name).toHaveValue('nightly');
    await fill(name, '-v2');
    await userEvent.click(screen.getByRole('button', { name: 'Save schedule' }));
    const dialog = await screen.findByRole('dialog', { name: 'Someone else changed this schedule' });
    // Both versions, field by field: my name against theirs, their description against mine.
    const table = await within(dialog).findByRole('table', { name: 'Your version and theirs' });
    await waitFor(() => expect(within(table).getByText('edited by olga')).toBeInTheDocument());
    expect(within(table).getByText('nightly-v2')).toBeInTheDocument();
    expect(within(dialog).getByText(/version 5/, { selector: 'th' })).toBeInTheDocument();
    // When theirs was saved, in the console's one absolute format (was the locale's "11/29/2026, 8:00:00 AM").
    expect(within(dialog).getByText(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/, { selector: 'code' })).toBeInTheDocument();
    // The dialog is the message: no "Precondition failed (412)" alert on the form behind it.
    expect(screen.queryByText(/\(412\)/)).toBeNull();
    expect(screen.queryAllByRole('alert').filter((a) => !dialog.contains(a))).toHaveLength(0);
    return dialog;
  };

  it('saves with If-Match of the version it loaded; after a 412 shows both versions and can take theirs', async () => {
    const fake = conflicting();
    const dialog = await saveAConflictingEdit();
    const patch = fake.calls.find((c) => c.method === 'PATCH');
    expect(patch?.headers.get('If-Match')).toBe('"4"');
    expect(await patch?.json()).toMatchObject({ name: 'nightly-v2', cron: '0 0 2 * * *', timezone: 'Europe/Berlin' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Use theirs (discard mine)' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(screen.getByRole('textbox', { name: 'Name' })).toHaveValue('nightly');
    expect(fake.calls.filter((c) => c.method === 'PATCH')).toHaveLength(1);
  });

  it('after a 412 can overwrite with mine, sending If-Match of their version', async () => {
    const fake = conflicting();
    const dialog = await saveAConflictingEdit();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Overwrite with mine' }));
    await waitFor(() => expect(screen.getByText('elsewhere')).toBeInTheDocument());
    const patches = fake.calls.filter((c) => c.method === 'PATCH');
    expect(patches.map((p) => p.headers.get('If-Match'))).toEqual(['"4"', '"5"']);
    expect(await patches[1]?.json()).toMatchObject({ name: 'nightly-v2' });
  });
});
