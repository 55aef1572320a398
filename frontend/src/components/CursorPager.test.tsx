import { MantineProvider } from '@mantine/core';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter, useLocation } from 'react-router';
import { useUrlFilters, useUrlPaging } from '../lib/search-params';
import { CursorPager, totalText } from './CursorPager';

const NEXT: Record<string, string | null> = { '': 'c2', c2: 'c3', c3: 'c4', c4: null };

function Pages() {
  const paging = useUrlPaging();
  const { set } = useUrlFilters();
  const location = useLocation();
  return (
    <>
      <output aria-label="url">{location.search}</output>
      <CursorPager paging={paging} nextCursor={NEXT[paging.cursor ?? '']} total={totalText(10001, 10000, 'jobs')} />
      <button onClick={() => set({ status: 'DEAD' })}>new filter</button>
    </>
  );
}

/** The list at a URL, as a reload or a shared link opens it. */
const open = (url: string) =>
  render(
    <MantineProvider env="test">
      <MemoryRouter initialEntries={[url]}>
        <Pages />
      </MemoryRouter>
    </MantineProvider>,
  );

describe('cursor pager', () => {
  it('goes forward, back with Previous, and says where it is and how many there are', async () => {
    const scroll = vi.fn();
    vi.stubGlobal('scrollTo', scroll);
    open('/jobs');
    expect(screen.getByText('Page 1 of more than 10,000 jobs')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Previous page' })).toBeDisabled();
    await userEvent.click(screen.getByRole('button', { name: 'Next page' }));
    await userEvent.click(screen.getByRole('button', { name: 'Next page' }));
    expect(screen.getByLabelText('url')).toHaveTextContent('?cursor=c3&back=c2');
    expect(screen.getByText(/^Page 3 of/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Previous page' }));
    expect(screen.getByLabelText('url')).toHaveTextContent('?cursor=c2');
    expect(screen.getByText(/^Page 2 of/)).toBeInTheDocument();
    expect(scroll).toHaveBeenCalledTimes(3);
    // A new filter starts again at page 1, without the old trail.
    await userEvent.click(screen.getByRole('button', { name: 'new filter' }));
    expect(screen.getByLabelText('url')).toHaveTextContent(/^\?status=DEAD$/);
    expect(screen.getByText(/^Page 1 of/)).toBeInTheDocument();
  });

  it('keeps Previous after a reload on page 4: the trail is in the URL', async () => {
    vi.stubGlobal('scrollTo', vi.fn());
    open('/jobs?status=DEAD&cursor=c4&back=c2&back=c3');
    expect(screen.getByText(/^Page 4 of/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Next page' })).toBeDisabled();
    await userEvent.click(screen.getByRole('button', { name: 'Previous page' }));
    expect(screen.getByLabelText('url')).toHaveTextContent('?status=DEAD&cursor=c3&back=c2');
    await userEvent.click(screen.getByRole('button', { name: 'Previous page' }));
    await userEvent.click(screen.getByRole('button', { name: 'Previous page' }));
    expect(screen.getByLabelText('url')).toHaveTextContent(/^\?status=DEAD$/);
    expect(screen.getByText(/^Page 1 of/)).toBeInTheDocument();
  });

  it('counts exactly up to the cap', () => {
    expect(totalText(1, 10000, 'job')).toBe('1 job');
    expect(totalText(10000, 10000, 'jobs')).toBe('10,000 jobs');
  });
});
