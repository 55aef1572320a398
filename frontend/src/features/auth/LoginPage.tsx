import { Alert, Button, Center, Code, Divider, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { Navigate, useLocation } from 'react-router';
import { ErrorAlert } from '../../components/ErrorAlert';
import { useSession } from '../../lib/session';
import { useListPersonasSafe } from './use-personas-safe';
import { useFirstRun } from './api/first-run';
import { useLogin } from './api/login';
import { usePersonaLogin } from './api/persona-login';

export function LoginPage() {
  const { user, endedMessage, clearEndedMessage } = useSession();
  const location = useLocation();
  const from = (location.state as { from?: string } | null)?.from ?? '/';
  const login = useLogin();
  const personaLogin = usePersonaLogin();
  const personas = useListPersonasSafe();
  const firstRun = useFirstRun().data;
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');

  if (user) return <Navigate to={from} replace />;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    clearEndedMessage();
    login.mutate({ username, password });
  };

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w={380}>
        <Stack>
          <Title order={1} size="h2">
            Sign in to cronplane
          </Title>
          {endedMessage && (
            <Alert color="yellow" role="alert">
              {endedMessage}
            </Alert>
          )}
          {firstRun?.initial_password_file && (
            <Alert color="blue" title="First run" role="note">
              Sign in as <Code>{firstRun.username}</Code> with the password printed in the terminal where{' '}
              <Code>cronplane serve</Code> started. It is also in <Code>{firstRun.initial_password_file}</Code> until you
              change it.
            </Alert>
          )}
          <form onSubmit={submit} aria-label="Sign in">
            <Stack>
              <TextInput label="Username" autoComplete="username" required withAsterisk={false} value={username} onChange={(e) => setUsername(e.currentTarget.value)} />
              <PasswordInput label="Password" autoComplete="current-password" required withAsterisk={false} value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
              <ErrorAlert error={login.error} title="Sign-in failed" />
              <Button type="submit" loading={login.isPending}>
                Sign in
              </Button>
            </Stack>
          </form>
          {personas.length > 0 && (
            <>
              <Divider label="or try a demo persona" />
              {personas.map((p) => (
                <Button
                  key={p.name}
                  variant="light"
                  title={p.label || undefined}
                  loading={personaLogin.isPending && personaLogin.variables === p.name}
                  onClick={() => {
                    clearEndedMessage();
                    personaLogin.mutate(p.name);
                  }}
                >
                  Continue as {p.role.charAt(0) + p.role.slice(1).toLowerCase()}
                </Button>
              ))}
              <ErrorAlert error={personaLogin.error} title="Persona sign-in failed" />
              <Text size="xs" c="dimmed">
                Demo personas are enabled on this server.
              </Text>
            </>
          )}
        </Stack>
      </Paper>
    </Center>
  );
}
