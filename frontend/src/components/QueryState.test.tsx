import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderScreen } from '../test/render';
import { QueryState } from './QueryState';

describe('QueryState', () => {
  it('announces a pending load as a named status, not a bare labelled span', () => {
    renderScreen(
      <QueryState isPending error={null}>
        <p>rows</p>
      </QueryState>,
    );
    expect(screen.getByRole('status', { name: 'Loading' })).toBeInTheDocument();
    expect(screen.queryByText('rows')).not.toBeInTheDocument();
  });
});
