import { describe, expect, it } from 'vitest';
import { applicableBulkActions } from './bulk-applicable';

describe('applicable bulk actions', () => {
  it('offers only Retry for dead jobs, and nothing to cancel among finished ones', () => {
    expect(applicableBulkActions(['DEAD'])).toEqual(['retry']);
    expect(applicableBulkActions(['DEAD', 'SUCCEEDED', 'CANCELLED'])).toEqual(['retry']);
    expect(applicableBulkActions(['SUCCEEDED'])).toEqual([]);
  });

  it('offers Cancel when something is still to run, and both for a mixed selection', () => {
    expect(applicableBulkActions(['PENDING', 'RUNNING'])).toEqual(['cancel']);
    expect(applicableBulkActions(['WAITING'])).toEqual(['cancel']);
    expect(applicableBulkActions(['PENDING', 'DEAD'])).toEqual(['cancel', 'retry']);
  });

  it('offers both when the statuses are not known (a filter without a status)', () => {
    expect(applicableBulkActions(null)).toEqual(['cancel', 'retry']);
    expect(applicableBulkActions([])).toEqual(['cancel', 'retry']);
  });
});
