import { MantineProvider } from '@mantine/core';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Link, MemoryRouter, Route, Routes } from 'react-router';
import { expect, it, vi } from 'vitest';
import { RouteErrorBoundary } from './routes';

function Broken(): never {
  throw new Error('cannot read the schedule');
}

it('a page that fails to render shows why in place of the page, and moving to another page clears it', async () => {
  vi.spyOn(console, 'error').mockImplementation(() => {}); // React reports the caught error
  render(
    <MantineProvider env="test">
      <MemoryRouter initialEntries={['/broken']}>
        <Link to="/fine">elsewhere</Link>
        <RouteErrorBoundary>
          <Routes>
            <Route path="/broken" element={<Broken />} />
            <Route path="/fine" element={<p>all well</p>} />
          </Routes>
        </RouteErrorBoundary>
      </MemoryRouter>
    </MantineProvider>,
  );
  expect(screen.getByText('This page failed to render')).toBeInTheDocument();
  expect(screen.getByText('cannot read the schedule')).toBeInTheDocument();
  expect(screen.getByRole('button', { name: 'Reload' })).toBeInTheDocument();
  await userEvent.click(screen.getByRole('link', { name: 'elsewhere' }));
  expect(await screen.findByText('all well')).toBeInTheDocument();
  expect(screen.queryByText('This page failed to render')).toBeNull();
});
