import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CronFieldProps } from '../../components/cron-field';
import { fill, fakeApi, json, problem, renderScreen } from '../../test/render';
import { emptyScheduleForm, validateScheduleForm } from './schedule-form';
import { NewSchedulePage } from './ScheduleFormPages';

const sleepSchema = { type: 'object', properties: { seconds: { type: 'number', minimum: 0 } }, required: ['seconds'], additionalProperties: false };
const handlers = [
  { name: 'noop', description: 'does nothing', payload_schema: { type: 'object' }, default_timeout_seconds: 60 },
  { name: 'sleep', description: 'sleeps', payload_schema: sleepSchema, default_timeout_seconds: 60 },
];

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
    const fake = fakeApi({ 'GET /handlers': () => json(handlers) });
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
    const fake = fakeApi({
      'GET /handlers': () => json(handlers),
      'POST /schedules': () => problem(409, 'A live schedule named nightly exists', { name: ['already taken'] }),
    });
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
    vi.stubGlobal('fetch', fakeApi({ 'GET /handlers': () => json(handlers) }).fetch);
    renderScreen(<NewSchedulePage CronField={CronStub} />, { role: 'OPERATOR' });
    expect(screen.getByRole('alert')).toHaveTextContent('Requires the ADMIN role');
    expect(screen.queryByRole('button', { name: 'Create schedule' })).toBeNull();
  });
});
