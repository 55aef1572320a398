import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Layout } from './Layout';
import { JobDetailPage } from '../features/jobs/JobDetailPage';
import { ScheduleDetailPage } from '../features/schedules/ScheduleDetailPage';
import { UsersPage } from '../features/users/UsersPage';
import { AuditChainPage } from '../features/audit/InstallationAuditPages';
import { aJobDetail, aSchedule } from '../test/factories';
import { fakeApi, http, renderScreen } from '../test/render';
import { GatedButton } from '../components/GatedButton';

const deadJob = aJobDetail({
  id: 5, handler: 'fail', payload: { message: 'x' }, status: 'DEAD', attempt_count: 3, max_attempts: 3,
  requested_by: 'op', error: 'boom', started_at: '2026-11-29T08:00:01Z', finished_at: '2026-11-29T08:00:02Z',
});
const schedule = aSchedule({ id: 3, name: 'nightly', timezone: 'Europe/Berlin', next_run_at: '2026-11-30T01:00:00Z' });
const getDeadJob = http.get('/api/v1/jobs/{job_id}', ({ response }) => response(200).json(deadJob));
const getSchedule = http.get('/api/v1/schedules/{schedule_id}', ({ response }) => response(200).json(schedule));
const noJobs = http.get('/api/v1/jobs', ({ response }) => response(200).json({ items: [], next_cursor: null }));

afterEach(() => vi.unstubAllGlobals());

describe('role gating', () => {
  it('a gated action is disabled for a lower role, stays focusable, and names the needed role', async () => {
    const onClick = vi.fn();
    renderScreen(<GatedButton operation="deleteSchedule" onClick={onClick}>Delete</GatedButton>, { role: 'OPERATOR' });
    const button = screen.getByRole('button', { name: 'Delete' });
    expect(button).toHaveAttribute('aria-disabled', 'true');
    expect(button).toHaveAttribute('title', 'Requires the ADMIN role');
    await userEvent.click(button);
    expect(onClick).not.toHaveBeenCalled();
    await userEvent.hover(button);
    expect(await screen.findByText('Requires the ADMIN role', { selector: '[role="tooltip"], .mantine-Tooltip-tooltip' })).toBeInTheDocument();
  });

  it('a VIEWER, who can use no action, is not shown one at all', () => {
    renderScreen(<GatedButton operation="cancelJob">Cancel</GatedButton>, { role: 'VIEWER' });
    expect(screen.queryByRole('button', { name: 'Cancel' })).toBeNull();
  });

  it('the same action is enabled for the role and above', async () => {
    const onClick = vi.fn();
    renderScreen(<GatedButton operation="cancelJob" onClick={onClick}>Cancel</GatedButton>, { role: 'ADMIN' });
    const button = screen.getByRole('button', { name: 'Cancel' });
    expect(button).not.toHaveAttribute('aria-disabled');
    await userEvent.click(button);
    expect(onClick).toHaveBeenCalledOnce();
  });

  it('a VIEWER sees a dead job with one read-only note instead of buttons it can never use', async () => {
    vi.stubGlobal('fetch', fakeApi(getDeadJob).fetch);
    renderScreen(<JobDetailPage />, { role: 'VIEWER', path: '/jobs/:id', route: '/jobs/5' });
    expect(await screen.findByTestId('read-only-note')).toHaveTextContent('Read-only (VIEWER)');
    expect(screen.getAllByTestId('read-only-note')).toHaveLength(1);
    for (const name of ['Retry', 'Rerun…', 'Cancel']) expect(screen.queryByRole('button', { name })).toBeNull();
  });

  it('an OPERATOR gets no read-only note', async () => {
    vi.stubGlobal('fetch', fakeApi(getDeadJob).fetch);
    renderScreen(<JobDetailPage />, { role: 'OPERATOR', path: '/jobs/:id', route: '/jobs/5' });
    expect(await screen.findByRole('button', { name: 'Retry' })).toBeInTheDocument();
    expect(screen.queryByTestId('read-only-note')).toBeNull();
  });

  it('an OPERATOR retries a dead job after confirming', async () => {
    const fake = fakeApi(
      getDeadJob,
      http.post('/api/v1/jobs/{job_id}/retry', ({ response }) => response(200).json({ ...deadJob, status: 'PENDING' })),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<JobDetailPage />, { role: 'OPERATOR', path: '/jobs/:id', route: '/jobs/5' });
    await userEvent.click(await screen.findByRole('button', { name: 'Retry' }));
    expect(fake.calls.some((c) => c.url.endsWith('/jobs/5/retry')), 'nothing is sent before confirming').toBe(false);
    await userEvent.click(screen.getByRole('button', { name: 'Retry job' }));
    await waitFor(() => expect(fake.calls.some((c) => c.method === 'POST' && c.url.endsWith('/jobs/5/retry'))).toBe(true));
  });

  it('on a schedule an OPERATOR may Run now but not edit, pause or delete', async () => {
    vi.stubGlobal('fetch', fakeApi(getSchedule, noJobs).fetch);
    renderScreen(<ScheduleDetailPage />, { role: 'OPERATOR', path: '/schedules/:id', route: '/schedules/3' });
    expect(await screen.findByRole('button', { name: 'Run now' })).not.toHaveAttribute('aria-disabled');
    for (const name of ['Edit', 'Pause', 'Delete']) {
      expect(screen.getByRole('button', { name })).toHaveAttribute('aria-disabled', 'true');
    }
  });

  it('Run now sends a fresh Idempotency-Key', async () => {
    const fake = fakeApi(
      getSchedule,
      noJobs,
      http.post('/api/v1/schedules/{schedule_id}/trigger', ({ response }) =>
        response(202).json({ ...deadJob, id: 9, status: 'PENDING', schedule_id: 3, trigger: 'manual' })),
    );
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<ScheduleDetailPage />, { role: 'OPERATOR', path: '/schedules/:id', route: '/schedules/3' });
    await userEvent.click(await screen.findByRole('button', { name: 'Run now' }));
    const dialog = await screen.findByRole('dialog');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Run now' }));
    await waitFor(() => expect(fake.calls.find((c) => c.url.endsWith('/trigger'))).toBeDefined());
    const key = fake.calls.find((c) => c.url.endsWith('/trigger'))?.headers.get('Idempotency-Key') ?? '';
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('navigation hides pages a role may not open', async () => {
    renderScreen(<Layout />, { role: 'OPERATOR' });
    expect(await screen.findByRole('link', { name: 'Audit' })).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Users' })).toBeNull();
    expect(screen.queryByRole('link', { name: 'Chaos' })).toBeNull();
  });

  it('a deep link to an ADMIN page tells a lower role why it is not shown, under the page\'s own heading and title', () => {
    renderScreen(<UsersPage />, { role: 'OPERATOR' });
    expect(screen.getByRole('alert')).toHaveTextContent('Requires the ADMIN role');
    expect(screen.getByRole('heading', { level: 1, name: 'Users' })).toBeInTheDocument();
    expect(document.title).toBe('Users · cronplane');
  });

  it('the navigation links come once the first frame is painted, not in it', async () => {
    renderScreen(<Layout />, { role: 'OPERATOR' });
    expect(screen.getByRole('navigation', { name: 'Main' }), 'its place is there from the start').toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Jobs' }), 'not in the first render (bench/RESULTS.md, issue 45)').toBeNull();
    expect(await screen.findByRole('link', { name: 'Jobs' })).toBeInTheDocument();
  });

  it('an instance ADMIN sees the Installation section: users, projects, sign-ins, audit chain, chaos', async () => {
    renderScreen(<Layout />, { role: 'ADMIN' });
    const section = await screen.findByRole('group', { name: 'Installation' });
    for (const name of ['Users', 'Projects', 'Sign-ins', 'Audit chain', 'Chaos']) {
      expect(within(section).getByRole('link', { name })).toBeInTheDocument();
    }
    expect(screen.getAllByRole('link', { name: 'Projects' }), 'Projects is listed once').toHaveLength(1);
  });

  it("a project's ADMIN (an instance VIEWER) gets no Installation section, and its pages say why", async () => {
    const team = { slug: 'team-a', name: 'Team A', archived: false, role: 'ADMIN' as const, quotas: {},
      usage: { enqueued_last_minute: 0, pending_jobs: 0, schedules: 0 } };
    vi.stubGlobal('fetch', fakeApi(
      http.get('/api/v1/projects', ({ response }) => response(200).json({ items: [team], next_cursor: null })),
    ).fetch);
    renderScreen(<Layout />, { role: 'VIEWER' });
    // The project role opens the project's pages (Notifications needs ADMIN there) …
    expect(await screen.findByRole('link', { name: 'Notifications' })).toBeInTheDocument();
    // … but nothing of the installation.
    expect(screen.queryByRole('group', { name: 'Installation' })).toBeNull();
    for (const name of ['Users', 'Sign-ins', 'Audit chain', 'Chaos']) {
      expect(screen.queryByRole('link', { name })).toBeNull();
    }
  });

  it('a deep link to an installation page tells a project role why it is not shown', () => {
    renderScreen(<AuditChainPage />, { role: 'OPERATOR' });
    expect(screen.getByRole('alert')).toHaveTextContent('of the installation');
  });
});
