import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aHandler, aJob } from '../../test/factories';
import { fill, fakeApi, http, renderScreen } from '../../test/render';
import { NewJobPage } from './NewJobPage';

const handlers = [
  aHandler({
    name: 'sleep',
    description: 'Sleeps, cancellably',
    payload_schema: { type: 'object', properties: { seconds: { type: 'number', minimum: 0, maximum: 3600 } }, required: ['seconds'], additionalProperties: false },
  }),
];
const getHandlers = http.get('/api/v1/handlers', ({ response }) => response(200).json(handlers));

afterEach(() => vi.unstubAllGlobals());

async function pickSleep() {
  await userEvent.click(screen.getByRole('combobox', { name: 'Handler' }));
  await userEvent.click(await screen.findByRole('option', { name: 'sleep' }));
}

const payloadBox = () => screen.getByRole('textbox', { name: 'Payload (JSON)' });

describe('ad-hoc job form', () => {
  it("checks the payload against the handler's payload_schema and sends nothing while it fails", async () => {
    const fake = fakeApi(getHandlers);
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<NewJobPage />, { role: 'OPERATOR' });
    await pickSleep();
    expect(payloadBox()).toHaveValue('{\n  "seconds": 0\n}');
    await userEvent.clear(payloadBox());
    await fill(payloadBox(), '{"seconds": "ten", "extra": 1}');
    expect(await screen.findByText('seconds must be number, not string')).toBeInTheDocument();
    expect(screen.getByText('extra is not an allowed property')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Create job' }));
    expect(fake.calls.filter((c) => c.method === 'POST')).toHaveLength(0);

    await userEvent.clear(payloadBox());
    await fill(payloadBox(), '{"seconds": 1');
    expect(await screen.findByText(/Not valid JSON/)).toBeInTheDocument();
    // Still said once the field loses focus to the submit: the editor's own check on blur used
    // to replace the message with a bare red border.
    await userEvent.click(screen.getByRole('button', { name: 'Create job' }));
    expect(payloadBox()).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getByText(/Not valid JSON/)).toBeInTheDocument();
    expect(fake.calls.filter((c) => c.method === 'POST')).toHaveLength(0);
  });

  it('sends a valid job with an Idempotency-Key and opens it', async () => {
    const fake = fakeApi(
      getHandlers,
      http.post('/api/v1/jobs', ({ response }) => response(202).json(aJob({ id: 77, handler: 'sleep', payload: { seconds: 2 } }))),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<NewJobPage />, { role: 'OPERATOR' });
    await pickSleep();
    await userEvent.clear(payloadBox());
    await fill(payloadBox(), '{"seconds": 2}');
    await userEvent.click(screen.getByRole('button', { name: 'Create job' }));
    await waitFor(() => expect(fake.calls.some((c) => c.method === 'POST')).toBe(true));
    const post = fake.calls.find((c) => c.method === 'POST');
    expect(post?.headers.get('Idempotency-Key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await post?.json()).toMatchObject({ handler: 'sleep', payload: { seconds: 2 }, priority: 0 });
    expect(await screen.findByText('elsewhere')).toBeInTheDocument();
  });
});
