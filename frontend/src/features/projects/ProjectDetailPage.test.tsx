import { screen, within } from '@testing-library/react';
import { HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, http, renderScreen } from '../../test/render';
import { ProjectDetailPage } from './ProjectDetailPage';

afterEach(() => vi.unstubAllGlobals());

const project = (role: string) => ({
  slug: 'payments', name: 'Payments', archived: false, role,
  quotas: { max_schedules: null, max_pending_jobs: null, enqueue_per_minute: null },
  usage: { schedules: 1, pending_jobs: 0, enqueued_last_minute: 0 },
});
const members = [{ project: 'payments', user_id: 7, username: 'alice', role: 'ADMIN' }, { project: 'payments', user_id: 8, username: 'bob', role: 'VIEWER' }];

function stub(role: string) {
  vi.stubGlobal('fetch', fakeApi(
    http.get('/api/v1/projects/{slug}', ({ response }) => response.untyped(HttpResponse.json(project(role)))),
    http.get('/api/v1/projects/{slug}/members', ({ response }) => response.untyped(HttpResponse.json({ items: members, next_cursor: null }))),
    http.get('/api/v1/projects/{slug}/usage', ({ response }) => response.untyped(HttpResponse.json({ items: [] }))),
  ).fetch);
}

describe('project detail page', () => {
  it('shows who may not manage members their roles as text: no greyed selects, no empty Actions column', async () => {
    stub('VIEWER');
    renderScreen(<ProjectDetailPage />, { role: 'VIEWER', path: '/projects/:slug', route: '/projects/payments' });
    const table = await screen.findByRole('table', { name: 'Members' });
    expect(await within(table).findByText('bob')).toBeInTheDocument();
    expect(within(table).getAllByTestId('member-role').map((r) => r.textContent)).toEqual(['ADMIN', 'VIEWER']);
    expect(within(table).queryByRole('combobox', { name: /^Role of/ })).toBeNull();
    expect(within(table).queryByRole('columnheader', { name: 'Actions' })).toBeNull();
    expect(within(table).queryByRole('button')).toBeNull();
  });

  it('offers a project ADMIN the role select and Remove', async () => {
    stub('ADMIN');
    renderScreen(<ProjectDetailPage />, { role: 'OPERATOR', path: '/projects/:slug', route: '/projects/payments' });
    const table = await screen.findByRole('table', { name: 'Members' });
    expect(await within(table).findByRole('combobox', { name: 'Role of bob' })).toHaveValue('VIEWER');
    expect(within(table).getByRole('columnheader', { name: 'Actions' })).toBeInTheDocument();
    expect(within(table).getByRole('button', { name: 'Remove bob' })).toBeInTheDocument();
    expect(within(table).queryByTestId('member-role')).toBeNull();
  });
});
