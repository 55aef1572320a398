import { MantineProvider } from '@mantine/core';
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, it } from 'vitest';
import { DeferredTooltip } from './DeferredTooltip';

it('renders the child at once, wraps it in the Tooltip when its code is in, and keeps the focus across the swap', async () => {
  render(
    <MantineProvider env="test">
      <DeferredTooltip label="Switch to dark mode">
        <button type="button">☾</button>
      </DeferredTooltip>
    </MantineProvider>,
  );
  const plain = screen.getByRole('button', { name: '☾' });
  plain.focus();
  // The Tooltip's module arrives after the first render: the button is then a new element.
  await waitFor(() => expect(screen.getByRole('button', { name: '☾' })).not.toBe(plain));
  const wrapped = screen.getByRole('button', { name: '☾' });
  expect(wrapped).toHaveFocus();
  await userEvent.hover(wrapped);
  expect(await screen.findByRole('tooltip')).toHaveTextContent('Switch to dark mode');
});
