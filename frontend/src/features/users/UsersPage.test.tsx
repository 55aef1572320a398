import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useLocation } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aProblem, aUser } from '../../test/factories';
import { fill, fakeApi, http, renderScreen } from '../../test/render';
import { UsersPage } from './UsersPage';

const users = [aUser({ id: 1, username: 'admin', role: 'ADMIN' }), aUser({ id: 2, username: 'olga', role: 'OPERATOR' })];
const listUsers = http.get('/api/v1/users', ({ response }) => response(200).json({ items: users, next_cursor: null }));

afterEach(() => vi.unstubAllGlobals());

function WithLocation() {
  const location = useLocation();
  return (
    <>
      <UsersPage />
      <output aria-label="url">{location.search}</output>
    </>
  );
}

describe('users page', () => {
  it('creates a user and shows the server field error', async () => {
    const fake = fakeApi(
      listUsers,
      http.post('/api/v1/users', ({ response }) =>
        response(422).json(aProblem(422, 'Invalid user', { password: ['Shorter than minimum length 12.'] }))),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<UsersPage />, { role: 'ADMIN' });
    await fill(screen.getByRole('textbox', { name: 'Username' }), 'vera');
    await fill(screen.getByLabelText(/^Password/), 'short');
    await userEvent.click(screen.getByRole('button', { name: 'Create' }));
    expect(await screen.findByText('Shorter than minimum length 12.')).toBeInTheDocument();
    expect(await fake.calls.find((c) => c.method === 'POST')?.json()).toEqual({ username: 'vera', password: 'short', role: 'VIEWER' });
  });

  it('locks another user after confirmation; the admin cannot lock itself', async () => {
    const fake = fakeApi(
      listUsers,
      http.post('/api/v1/users/{user_id}/lock', ({ response }) => response(200).json({ ...users[1]!, locked: true })),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<UsersPage />, { role: 'ADMIN' });
    expect(await screen.findByRole('button', { name: 'Lock admin' })).toBeDisabled();
    await userEvent.click(screen.getByRole('button', { name: 'Lock olga' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Lock' }));
    await waitFor(() => expect(fake.calls.some((c) => c.method === 'POST' && c.url.endsWith('/users/2/lock'))).toBe(true));
  });

  it('reads its search and page from the URL (an audit row opens its one user) and writes the search back', async () => {
    const fake = fakeApi(
      http.get('/api/v1/users', ({ request, response }) => {
        const q = new URL(request.url).searchParams.get('q');
        return response(200).json({ items: q === '#2' ? [users[1]!] : [], next_cursor: q === '#2' ? 'c2' : null });
      }),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<WithLocation />, { role: 'ADMIN', path: '/users', route: '/users?q=%232' });
    expect(await screen.findByText('olga')).toBeInTheDocument();
    expect(screen.queryByText('admin')).not.toBeInTheDocument();
    expect(screen.getByRole('searchbox', { name: 'Search' })).toHaveValue('#2');
    await userEvent.click(screen.getByRole('button', { name: 'Next page' }));
    await waitFor(() => expect(screen.getByLabelText('url')).toHaveTextContent('cursor=c2'));
    const paged = fake.calls.filter((c) => new URL(c.url).pathname === '/api/v1/users').at(-1);
    expect(Object.fromEntries(new URL(paged?.url ?? '').searchParams)).toEqual({ limit: '200', q: '#2', cursor: 'c2' });
    await userEvent.clear(screen.getByRole('searchbox', { name: 'Search' }));
    await fill(screen.getByRole('searchbox', { name: 'Search' }), 'nobody');
    await waitFor(() => expect(screen.getByLabelText('url')).toHaveTextContent(/^\?q=nobody$/));
    expect(await screen.findByText('No user matches this search.')).toBeInTheDocument();
    // The empty state offers the way back, and the search box follows the URL it clears.
    await userEvent.click(screen.getByRole('button', { name: 'Clear the search' }));
    await waitFor(() => expect(screen.getByLabelText('url')).toHaveTextContent(/^$/));
    expect(screen.getByRole('searchbox', { name: 'Search' })).toHaveValue('');
  });

  it('an empty directory says how to add the first account, not a bare "No users."', async () => {
    vi.stubGlobal('fetch', fakeApi(http.get('/api/v1/users', ({ response }) => response(200).json({ items: [], next_cursor: null }))).fetch);
    renderScreen(<UsersPage />, { role: 'ADMIN' });
    expect(await screen.findByText(/No users yet: create the first account with the form above/)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Clear the search' })).toBeNull();
  });
  it("shows a user's API tokens to an instance ADMIN and revokes one after confirmation", async () => {
    const token = {
      id: 41, name: 'nightly-ci', role: 'OPERATOR' as const, project: 'payments' as string | null, prefix: 'ab12cd34',
      created_at: '2026-12-01T10:00:00Z', expires_at: null, last_used_at: null,
    };
    let live = [token, { ...token, id: 42, name: 'deploy', project: null }];
    const fake = fakeApi(
      listUsers,
      http.get('/api/v1/tokens', ({ response }) => response(200).json({ items: live, next_cursor: null })),
      http.delete('/api/v1/tokens/{token_id}', ({ response }) => {
        live = live.filter((t) => t.id !== 41);
        return response(204).empty();
      }),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<UsersPage />, { role: 'ADMIN' });
    await userEvent.click(await screen.findByRole('button', { name: 'API tokens of olga' }));
    const table = await screen.findByRole('table', { name: 'API tokens of olga' });
    expect(await within(table).findByText('nightly-ci')).toBeInTheDocument();
    expect(within(table).getByText('every project')).toBeInTheDocument();
    const listed = fake.calls.find((c) => new URL(c.url).pathname === '/api/v1/tokens');
    expect(new URL(listed?.url ?? '').searchParams.get('user_id')).toBe('2');
    await userEvent.click(screen.getByRole('button', { name: 'Revoke token nightly-ci of olga' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Revoke token' }));
    await waitFor(() => expect(fake.calls.some((c) => c.method === 'DELETE' && c.url.endsWith('/tokens/41'))).toBe(true));
    await waitFor(() => expect(within(table).queryByText('nightly-ci')).toBeNull());
    expect(within(table).getByText('deploy')).toBeInTheDocument();
  });

  it("says so when a user has no tokens, and closes the panel", async () => {
    const fake = fakeApi(listUsers, http.get('/api/v1/tokens', ({ response }) => response(200).json({ items: [], next_cursor: null })));
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<UsersPage />, { role: 'ADMIN' });
    await userEvent.click(await screen.findByRole('button', { name: 'API tokens of admin' }));
    expect(await screen.findByText('admin has no API tokens.')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Close' }));
    expect(screen.queryByText('admin has no API tokens.')).toBeNull();
  });
});
