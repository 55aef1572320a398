import { Button, Group, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/problem';
import type { Me } from '../../api/types';
import { ErrorAlert } from '../../components/ErrorAlert';
import { useChangePassword } from './api/change-password';

// The server's policy (user creation and POST /auth/password): checked here only to answer sooner.
const MIN_LENGTH = 8;

/** Why an account has no password form: the server would answer 409 for the same reasons. */
function noPasswordReason(me: Me): string {
  if (me.is_persona) return 'Demo personas sign in with one click and have no password to change.';
  if (me.identity) return `You sign in through ${me.identity.issuer}: change your password there.`;
  return 'Password sign-in is turned off on this server, so there is no password to change here.';
}

function PasswordForm() {
  const change = useChangePassword();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [mismatch, setMismatch] = useState<string | null>(null);
  const fields = change.error instanceof ApiError ? change.error.fieldErrors : {};
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (next !== repeat) {
      setMismatch('The two new passwords differ.');
      return;
    }
    setMismatch(null);
    change.mutate(
      { current_password: current, new_password: next },
      {
        onSuccess: () => {
          setCurrent('');
          setNext('');
          setRepeat('');
        },
      },
    );
  };
  return (
    <form onSubmit={submit} aria-label="Change password">
      <Stack gap="sm" maw={360}>
        <PasswordInput label="Current password" required autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.currentTarget.value)} error={fields.current_password} />
        <PasswordInput
          label="New password"
          required
          autoComplete="new-password"
          description={`At least ${MIN_LENGTH} characters`}
          value={next}
          onChange={(e) => setNext(e.currentTarget.value)}
          error={fields.new_password}
        />
        <PasswordInput label="Repeat the new password" required autoComplete="new-password" value={repeat} onChange={(e) => setRepeat(e.currentTarget.value)} error={mismatch} />
        <ErrorAlert error={change.error} hideFields />
        <Group>
          <Button type="submit" loading={change.isPending}>
            Change password
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export function PasswordSection({ me }: { me: Me }) {
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="password-heading">
      <Stack>
        <div>
          <Title order={2} size="h4" id="password-heading">
            Password
          </Title>
          {me.can_change_password && (
            <Text size="sm" c="dimmed">
              Changing it signs out your other sessions at once; this one stays signed in. API tokens keep working: delete any you no longer trust.
            </Text>
          )}
        </div>
        {me.can_change_password ? <PasswordForm /> : <Text size="sm">{noPasswordReason(me)}</Text>}
      </Stack>
    </Paper>
  );
}
