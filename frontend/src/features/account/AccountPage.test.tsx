import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useQueryClient } from '@tanstack/react-query';
import { HttpResponse } from 'msw';
import { useState } from 'react';
import { meQueryKey } from '../../api/queries/get-me';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApiToken, Me, Role } from '../../api/types';
import { Toaster } from '../../components/Toaster';
import { aMe, aProblem } from '../../test/factories';
import { fakeApi, fill, http, renderScreen } from '../../test/render';
import { AccountPage } from './AccountPage';

const SECRET = 'cp_abcd1234_s3cr3t-shown-once';
const aToken = (overrides: Partial<ApiToken> = {}): ApiToken => ({
  id: 7, name: 'nightly-ci', role: 'VIEWER', project: null, prefix: 'abcd1234', created_at: '2026-12-01T10:00:00Z',
  expires_at: null, last_used_at: null, ...overrides,
});
const payments = { slug: 'payments', name: 'Payments', archived: false, role: 'OPERATOR' as Role, quotas: {}, usage: { schedules: 1, pending_jobs: 0, enqueued_last_minute: 0 } };
const meIs = (me: Me) => http.get('/api/v1/auth/me', ({ response }) => response(200).json(me));
const projects = http.get('/api/v1/projects', ({ response }) => response(200).json({ items: [payments], next_cursor: null }));
const noTokens = http.get('/api/v1/tokens', ({ response }) => response(200).json({ items: [], next_cursor: null }));

afterEach(() => vi.unstubAllGlobals());

/** As after a sign-in: the cache holds the login answer's user, without what only /auth/me says. */
function SignedInJustNow() {
  const qc = useQueryClient();
  useState(() => qc.setQueryData(meQueryKey, { id: 1, username: 'ada', role: 'VIEWER' }));
  return <AccountPage />;
}

function show(role: Role) {
  return renderScreen(
    <>
      <AccountPage />
      <Toaster />
    </>,
    { role, path: '/account', route: '/account' },
  );
}

describe('account page', () => {
  it('says who you are: name, role, how you sign in, your projects; no tokens yet says what they are for', async () => {
    vi.stubGlobal('fetch', fakeApi(meIs(aMe({ username: 'olga', role: 'OPERATOR' })), projects, noTokens).fetch);
    show('OPERATOR');
    const who = await screen.findByRole('region', { name: 'Who you are' });
    expect(within(who).getByText('olga')).toBeInTheDocument();
    expect(within(who).getByText('OPERATOR')).toBeInTheDocument();
    expect(within(who).getByText('a password (local account)')).toBeInTheDocument();
    expect(await within(who).findByRole('list', { name: 'Your projects' })).toHaveTextContent('Payments payments — OPERATOR');
    expect(await screen.findByText(/No API tokens yet/)).toBeInTheDocument();
    expect(screen.getByRole('form', { name: 'Change password' })).toBeInTheDocument();
  });

  it('reads /auth/me afresh when the cache holds only the sign-in answer, and never shows a wrong reason meanwhile', async () => {
    const fake = fakeApi(meIs(aMe({ role: 'VIEWER' })), projects, noTokens);
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<SignedInJustNow />, { role: 'VIEWER', path: '/account', route: '/account' });
    expect(screen.queryByText(/Password sign-in is turned off/)).not.toBeInTheDocument();
    expect(await screen.findByRole('form', { name: 'Change password' })).toBeInTheDocument();
    expect(fake.calls.some((c) => new URL(c.url).pathname === '/api/v1/auth/me')).toBe(true);
  });

  it('shows the provider identity of an OIDC account and no password form', async () => {
    const oidc = aMe({ role: 'VIEWER', can_change_password: false, identity: { issuer: 'https://idp.example', subject: 'u-42', groups: ['eng'] } });
    vi.stubGlobal('fetch', fakeApi(meIs(oidc), projects, noTokens).fetch);
    show('VIEWER');
    const who = await screen.findByRole('region', { name: 'Who you are' });
    expect(within(who).getByText('the identity provider https://idp.example')).toBeInTheDocument();
    expect(within(who).getByText('u-42')).toBeInTheDocument();
    expect(screen.queryByRole('form', { name: 'Change password' })).not.toBeInTheDocument();
    expect(screen.getByText('You sign in through https://idp.example: change your password there.')).toBeInTheDocument();
  });

  it('a demo persona has neither a password form nor a token form', async () => {
    vi.stubGlobal('fetch', fakeApi(meIs(aMe({ role: 'VIEWER', is_persona: true, can_change_password: false })), projects, noTokens).fetch);
    show('VIEWER');
    expect(await screen.findByText(/Demo personas sign in with one click/)).toBeInTheDocument();
    expect(screen.queryByLabelText('Current password')).not.toBeInTheDocument();
    // Nor a token form: the server refuses personas tokens (403), which would outlive the demo.
    expect(screen.getByText(/Demo personas cannot create API tokens/)).toBeInTheDocument();
    expect(screen.queryByRole('form', { name: 'New API token' })).not.toBeInTheDocument();
  });

  it('creates a token with at most your role and shows its secret once, with a copy button', async () => {
    let listed: ApiToken[] = [];
    const fake = fakeApi(
      meIs(aMe({ role: 'OPERATOR' })),
      projects,
      http.get('/api/v1/tokens', ({ response }) => response(200).json({ items: listed, next_cursor: null })),
      http.post('/api/v1/tokens', async ({ request, response }) => {
        const body = await request.json();
        listed = [aToken({ name: body.name, role: body.role ?? 'OPERATOR', project: body.project ?? null })];
        return response(201).json({ ...listed[0]!, token: SECRET });
      }),
    );
    vi.stubGlobal('fetch', fake.fetch);
    show('OPERATOR');
    const form = await screen.findByRole('form', { name: 'New API token' });
    await userEvent.click(within(form).getByRole('combobox', { name: 'Role' }));
    const offered = (await screen.findAllByRole('option')).map((o) => o.textContent);
    expect(offered).toEqual(['VIEWER', 'OPERATOR']);
    await userEvent.click(screen.getByRole('option', { name: 'VIEWER' }));
    await fill(within(form).getByRole('textbox', { name: /^Name/ }), 'nightly-ci');
    await userEvent.click(within(form).getByRole('combobox', { name: 'Project' }));
    await userEvent.click(await screen.findByRole('option', { name: 'Payments (payments)' }));
    await userEvent.click(within(form).getByRole('combobox', { name: 'Expires' }));
    await userEvent.click(await screen.findByRole('option', { name: 'In 30 days' }));
    await userEvent.click(within(form).getByRole('button', { name: 'Create token' }));

    const secret = await screen.findByRole('region', { name: 'Copy the secret of nightly-ci now' });
    expect(secret).toHaveTextContent(SECRET);
    expect(secret).toHaveTextContent('You will not see this secret again');
    expect(within(secret).getByRole('button', { name: 'Copy token' })).toBeInTheDocument();
    expect(await screen.findByText('Token created')).toBeInTheDocument();
    const sent = await fake.calls.find((c) => c.method === 'POST')!.json();
    expect(sent).toMatchObject({ name: 'nightly-ci', role: 'VIEWER', project: 'payments' });
    const days = (Date.parse(sent.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
    expect(await screen.findByRole('table', { name: 'API tokens' })).toHaveTextContent('nightly-ci');

    await userEvent.click(within(secret).getByRole('button', { name: 'I have saved it' }));
    expect(screen.queryByText(SECRET)).not.toBeInTheDocument();
  });

  it('shows a refused creation readably, beside the field it names', async () => {
    vi.stubGlobal('fetch', fakeApi(
      meIs(aMe({ role: 'VIEWER' })),
      projects,
      noTokens,
      http.post('/api/v1/tokens', ({ response }) => response(422).json(aProblem(422, 'Invalid token', { name: ['Must not be blank.'] }))),
    ).fetch);
    show('VIEWER');
    const form = await screen.findByRole('form', { name: 'New API token' });
    await fill(within(form).getByRole('textbox', { name: /^Name/ }), ' ');
    await userEvent.click(within(form).getByRole('button', { name: 'Create token' }));
    expect(await within(form).findByText('Must not be blank.')).toBeInTheDocument();
    expect(within(form).getByRole('alert')).toHaveTextContent('Invalid token');
  });

  it('deletes a token only after confirmation', async () => {
    let listed = [aToken()];
    const fake = fakeApi(
      meIs(aMe({ role: 'ADMIN' })),
      projects,
      http.get('/api/v1/tokens', ({ response }) => response(200).json({ items: listed, next_cursor: null })),
      http.delete('/api/v1/tokens/{token_id}', ({ response }) => {
        listed = [];
        return response(204).empty();
      }),
    );
    vi.stubGlobal('fetch', fake.fetch);
    show('ADMIN');
    await userEvent.click(await screen.findByRole('button', { name: 'Delete token nightly-ci' }));
    const dialog = await screen.findByRole('dialog', { name: 'Delete token nightly-ci?' });
    expect(fake.calls.some((c) => c.method === 'DELETE')).toBe(false);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete token' }));
    await waitFor(() => expect(fake.calls.some((c) => c.method === 'DELETE' && c.url.endsWith('/tokens/7'))).toBe(true));
    expect(await screen.findByText('Token deleted')).toBeInTheDocument();
    expect(await screen.findByText(/No API tokens yet/)).toBeInTheDocument();
  });

  it('offers Retry when the tokens fail to load', async () => {
    let up = false;
    vi.stubGlobal('fetch', fakeApi(
      meIs(aMe({ role: 'VIEWER' })),
      projects,
      http.get('/api/v1/tokens', ({ response }) => up
        ? response(200).json({ items: [aToken()], next_cursor: null })
        : response.untyped(HttpResponse.json(aProblem(503, 'database unavailable'), { status: 503 }))),
    ).fetch);
    show('VIEWER');
    const tokens = await screen.findByRole('region', { name: 'API tokens' });
    const alert = await within(tokens).findByRole('alert');
    expect(alert).toHaveTextContent('database unavailable');
    up = true;
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'API tokens' })).toHaveTextContent('nightly-ci');
  });

  it('changes the password: checks the repeat, shows a wrong current password at its field, then succeeds', async () => {
    let wrong = true;
    const fake = fakeApi(
      meIs(aMe({ role: 'VIEWER' })),
      projects,
      noTokens,
      http.post('/api/v1/auth/password', ({ response }) => wrong
        ? response(403).json(aProblem(403, 'The current password is wrong; nothing was changed.', { current_password: ['Wrong password.'] }))
        : response(200).json({ token_type: 'Bearer', expires_in: 900, user: { id: 1, username: 'ada', role: 'VIEWER' } })),
    );
    vi.stubGlobal('fetch', fake.fetch);
    show('VIEWER');
    const form = await screen.findByRole('form', { name: 'Change password' });
    await fill(within(form).getByLabelText(/^Current password/), 'old password');
    await fill(within(form).getByLabelText(/^New password/), 'a new passphrase');
    await fill(within(form).getByLabelText(/^Repeat the new password/), 'a new passphrasf');
    await userEvent.click(within(form).getByRole('button', { name: 'Change password' }));
    expect(await within(form).findByText('The two new passwords differ.')).toBeInTheDocument();
    expect(fake.calls.some((c) => c.url.endsWith('/auth/password'))).toBe(false);

    await userEvent.clear(within(form).getByLabelText(/^Repeat the new password/));
    await fill(within(form).getByLabelText(/^Repeat the new password/), 'a new passphrase');
    await userEvent.click(within(form).getByRole('button', { name: 'Change password' }));
    expect(await within(form).findByText('Wrong password.')).toBeInTheDocument();
    expect(within(form).getByRole('alert')).toHaveTextContent('The current password is wrong; nothing was changed.');

    wrong = false;
    await userEvent.click(within(form).getByRole('button', { name: 'Change password' }));
    expect(await screen.findByText('Password changed; your other sessions are signed out')).toBeInTheDocument();
    expect(within(form).getByLabelText(/^Current password/)).toHaveValue('');
    const sent = await fake.calls.filter((c) => c.url.endsWith('/auth/password')).at(-1)!.json();
    expect(sent).toEqual({ current_password: 'old password', new_password: 'a new passphrase' });
  });
});
