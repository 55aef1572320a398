import { describe, expect, it } from 'vitest';
import { scheduleState } from './ScheduleHealth';

const run = (id: number, status: string) => ({ id, status, finished_at: '2026-12-01T10:00:00Z' });

describe('scheduleState', () => {
  it('a schedule whose newest run died is failing, not active', () => {
    expect(scheduleState({ paused: false }, [run(3, 'DEAD'), run(2, 'SUCCEEDED')])).toBe('failing');
    expect(scheduleState({ paused: false }, [run(3, 'SUCCEEDED'), run(2, 'DEAD')])).toBe('ok');
  });
  it('deleted and paused win; the server health wins over the derived state', () => {
    expect(scheduleState({ paused: true, deleted_at: '2026-12-01T10:00:00Z' }, [])).toBe('deleted');
    expect(scheduleState({ paused: true }, [run(1, 'DEAD')])).toBe('paused');
    expect(scheduleState({ paused: false, health: { state: 'late' } }, [run(1, 'SUCCEEDED')])).toBe('late');
  });
  it('no finished run yet is new; unknown runs are plain active', () => {
    expect(scheduleState({ paused: false }, [{ id: 1, status: 'RUNNING', finished_at: null }])).toBe('new');
    expect(scheduleState({ paused: false }, undefined)).toBe('active');
  });
});
