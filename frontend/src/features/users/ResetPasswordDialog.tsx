import { Button, Group, Modal, PasswordInput, Stack, Text } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/problem';
import type { User } from '../../api/types';
import { ErrorAlert } from '../../components/ErrorAlert';
import { GatedButton } from '../../components/GatedButton';
import { useResetUserPassword } from './api/reset-user-password';

/** An ADMIN sets someone else's password (POST /users/{id}/password): the control the first-run
 * banner used to name when none existed (review 2026-12-05 §4.2). Your own password is changed
 * under Account, with the current one; a reset here would end your own session. */
export function ResetPasswordDialog({ user, self }: { user: User; self: boolean }) {
  const reset = useResetUserPassword();
  const [open, setOpen] = useState(false);
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const fields = reset.error instanceof ApiError ? reset.error.fieldErrors : {};
  const close = () => {
    setOpen(false);
    setPassword('');
    setRepeat('');
    setMismatch(false);
    reset.reset();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (password !== repeat) {
      setMismatch(true);
      return;
    }
    setMismatch(false);
    reset.mutate({ id: user.id, password }, { onSuccess: close });
  };
  return (
    <>
      <GatedButton
        operation="resetUserPassword"
        size="compact-sm"
        variant="light"
        disabled={self}
        aria-label={`Reset password of ${user.username}`}
        onClick={() => setOpen(true)}
      >
        Reset password
      </GatedButton>
      <Modal opened={open} onClose={close} title={`Reset the password of ${user.username}?`} centered>
        <form onSubmit={submit} aria-label={`Password reset of ${user.username}`}>
          <Stack>
            <Text size="sm">Their sessions and API tokens end at once. Tell them the new password over a channel you trust; they can change it under Account.</Text>
            <PasswordInput label="New password" required autoComplete="new-password" value={password} onChange={(e) => setPassword(e.currentTarget.value)} error={fields.password} data-autofocus />
            <PasswordInput
              label="Repeat the new password"
              required
              autoComplete="new-password"
              value={repeat}
              onChange={(e) => setRepeat(e.currentTarget.value)}
              error={mismatch ? 'The two passwords differ.' : undefined}
            />
            <ErrorAlert error={reset.error} hideFields />
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button type="submit" color="red" loading={reset.isPending}>
                Reset password
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </>
  );
}
