import spec from '../../openapi.json';
import { REQUIRED_ROLE } from '../api/required-roles';
import { isReadOnly, roleAtLeast, roleFor } from './roles';

type Operation = { operationId?: string; 'x-required-role'?: string };

describe('role gates', () => {
  it('carry exactly the x-required-role of every operation in the OpenAPI document', () => {
    const fromSpec: Record<string, string> = {};
    for (const item of Object.values(spec.paths) as Record<string, Operation>[]) {
      for (const op of Object.values(item)) {
        if (op.operationId) fromSpec[op.operationId] = op['x-required-role'] ?? 'missing';
      }
    }
    expect(REQUIRED_ROLE).toEqual(fromSpec);
  });

  it('read the role of an operation from that map', () => {
    expect(roleFor('cancelJob')).toBe('OPERATOR');
    expect(roleFor('createSchedule')).toBe('ADMIN');
    expect(roleFor('listJobs')).toBe('VIEWER');
    expect(roleAtLeast('ADMIN', roleFor('cancelJob'))).toBe(true);
    expect(roleAtLeast('VIEWER', roleFor('cancelJob'))).toBe(false);
  });

  it('call only a VIEWER read-only (a role below OPERATOR, or none)', () => {
    const as = (role: 'VIEWER' | 'OPERATOR' | 'ADMIN' | undefined) => (needed: 'VIEWER' | 'OPERATOR' | 'ADMIN') => roleAtLeast(role, needed);
    expect(isReadOnly(as('VIEWER'))).toBe(true);
    expect(isReadOnly(as(undefined))).toBe(true);
    expect(isReadOnly(as('OPERATOR'))).toBe(false);
    expect(isReadOnly(as('ADMIN'))).toBe(false);
  });
});
