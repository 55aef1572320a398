import { MantineProvider } from '@mantine/core';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { CursorPager, totalText } from './CursorPager';

function Pages() {
  const [cursor, setCursor] = useState<string | null>(null);
  const next = { '': 'c2', c2: 'c3', c3: null }[cursor ?? ''] ?? null;
  return (
    <MantineProvider env="test">
      <span data-testid="at">{cursor ?? 'first'}</span>
      <CursorPager cursor={cursor} nextCursor={next} onChange={setCursor} total={totalText(10001, 10000, 'jobs')} />
      <button onClick={() => setCursor(null)}>new filter</button>
    </MantineProvider>
  );
}

describe('cursor pager', () => {
  it('goes forward, back with Previous, and says where it is and how many there are', async () => {
    const scroll = vi.fn();
    vi.stubGlobal('scrollTo', scroll);
    render(<Pages />);
    expect(screen.getByText('Page 1 of more than 10,000 jobs')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Previous page' })).toBeDisabled();
    await userEvent.click(screen.getByRole('button', { name: 'Next page' }));
    await userEvent.click(screen.getByRole('button', { name: 'Next page' }));
    expect(screen.getByTestId('at')).toHaveTextContent('c3');
    expect(screen.getByText(/^Page 3 of/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Next page' })).toBeDisabled();
    await userEvent.click(screen.getByRole('button', { name: 'Previous page' }));
    expect(screen.getByTestId('at')).toHaveTextContent('c2');
    expect(screen.getByText(/^Page 2 of/)).toBeInTheDocument();
    expect(scroll).toHaveBeenCalledTimes(3);
    // A new filter starts again at page 1.
    await userEvent.click(screen.getByRole('button', { name: 'new filter' }));
    expect(screen.getByText(/^Page 1 of/)).toBeInTheDocument();
  });

  it('counts exactly up to the cap', () => {
    expect(totalText(1, 10000, 'job')).toBe('1 job');
    expect(totalText(10000, 10000, 'jobs')).toBe('10,000 jobs');
  });
});
