import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { renderScreen } from '../test/render';
import { ConfirmButton } from './ConfirmButton';

describe('ConfirmButton', () => {
  it('answers a destructive question with "Keep it", and runs nothing', async () => {
    const onConfirm = vi.fn(async () => undefined);
    renderScreen(
      <ConfirmButton operation="cancelJob" title="Cancel job #7" message="It stops." confirmLabel="Cancel job" onConfirm={onConfirm}>
        Cancel
      </ConfirmButton>,
    );
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(await screen.findByRole('dialog', { name: 'Cancel job #7' })).toBeVisible();
    await userEvent.click(screen.getByRole('button', { name: 'Keep it' }));
    expect(onConfirm).not.toHaveBeenCalled();
  });

  it('lets a dialog that only starts something be cancelled with "Cancel" (the review\'s "Run now")', async () => {
    const onConfirm = vi.fn(async () => undefined);
    renderScreen(
      <ConfirmButton operation="triggerSchedule" color="blue" title="Run nightly now" message="One run now." confirmLabel="Run now" onConfirm={onConfirm}>
        Run now
      </ConfirmButton>,
    );
    await userEvent.click(screen.getByRole('button', { name: 'Run now' }));
    const dialog = await screen.findByRole('dialog', { name: 'Run nightly now' });
    expect(screen.queryByRole('button', { name: 'Keep it' })).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(dialog).not.toBeInTheDocument());
    expect(onConfirm).not.toHaveBeenCalled();
  });
});
