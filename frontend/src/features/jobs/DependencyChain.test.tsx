import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { aJobDetail } from '../../test/factories';
import { renderScreen } from '../../test/render';
import { DependencyChain } from './DependencyChain';

const T = '2026-12-05T10:00:00Z';

describe('job dependency chain', () => {
  it('shows what a chained fire waits on and what waits on it, with states and keyed fire times', () => {
    const job = aJobDetail({
      id: 7, status: 'WAITING', schedule_id: 3, fire_time: T,
      depends_on: [{ id: 5, status: 'RUNNING', handler: 'noop', schedule_id: 2, schedule_name: 'transform', fire_time: T }],
      dependents: [{ id: 9, status: 'WAITING', handler: 'noop', schedule_id: 4, schedule_name: 'report', fire_time: T }],
    });
    renderScreen(<DependencyChain job={job} />, { role: 'VIEWER' });
    const up = screen.getByRole('listitem', { name: 'upstream job 5' });
    expect(within(up).getByText('RUNNING')).toBeInTheDocument();
    expect(within(up).getByRole('link', { name: 'transform' })).toHaveAttribute('href', '/schedules/2');
    expect(within(up).getByTestId('keyed-fire')).toHaveTextContent('2026-12-05');
    const down = screen.getByRole('listitem', { name: 'downstream job 9' });
    expect(within(down).getByRole('link', { name: '#9' })).toHaveAttribute('href', '/jobs/9');
  });

  it('is absent for a job without dependencies', () => {
    renderScreen(<DependencyChain job={aJobDetail()} />, { role: 'VIEWER' });
    expect(screen.queryByRole('region', { name: 'Dependency chain' })).toBeNull();
  });
});
