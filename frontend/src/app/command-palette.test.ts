import { describe, expect, it } from 'vitest';
import type { Role } from '../api/types';
import { roleAtLeast } from '../lib/roles';
import { commandsFor, jobIdIn } from './command-palette';

const as = (role: Role) => (needed: Role) => roleAtLeast(role, needed);

describe('command palette', () => {
  it('reads a job id however it is typed', () => {
    expect(['2004', '#2004', ' job 2004 ', 'Job #2004'].map(jobIdIn)).toEqual([2004, 2004, 2004, 2004]);
    expect(['0', 'abc', '20x', '99999999999999999999'].map(jobIdIn)).toEqual([null, null, null, null]);
  });

  it('puts the job first, then schedules whose name matches, then actions', () => {
    const found = commandsFor('nightly', as('ADMIN'), [
      { id: 3, name: 'nightly-report' },
      { id: 4, name: 'hourly' },
    ]);
    expect(found.map((c) => c.to)).toEqual(['/schedules/3']);
    expect(commandsFor('#12', as('VIEWER'), [])[0]).toMatchObject({ label: 'Open job #12', to: '/jobs/12' });
  });

  it('offers only the actions the role may take', () => {
    const viewer = commandsFor('new', as('VIEWER'), []).map((c) => c.id);
    const admin = commandsFor('new', as('ADMIN'), []).map((c) => c.id);
    expect(viewer).toEqual([]);
    expect(admin).toEqual(['new-job', 'new-schedule']);
    expect(commandsFor('dead jobs', as('VIEWER'), []).map((c) => c.to)).toEqual(['/jobs?status=DEAD']);
  });
});
