import { Alert, Button, Center, Code, Divider, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { Navigate, useLocation, useSearchParams } from 'react-router';
import { ErrorAlert } from '../../components/ErrorAlert';
import { useDocumentTitle } from '../../components/PageHeader';
import { useSession } from '../../lib/session';
import { useListPersonasSafe } from './use-personas-safe';
import { useFirstRun } from './api/first-run';
import { useProviders } from './api/list-providers';
import { useLogin } from './api/login';
import { usePersonaLogin } from './api/persona-login';

/** What each `/login?error=` reason from the provider callback means, in words. */
const PROVIDER_ERRORS: Record<string, string> = {
  bad_state: 'The sign-in expired or was started in another browser',
  code_rejected: 'The identity provider refused the sign-in code (used twice?)',
  bad_signature: 'The identity token was not signed by the identity provider',
  bad_issuer: 'The identity token came from another issuer',
  bad_audience: 'The identity token was issued for another application',
  bad_nonce: 'The identity token does not belong to this sign-in',
  expired: 'The identity token has expired',
  no_mapped_group: 'None of your groups at the identity provider gives access to cronplane',
  provider_unavailable: 'The identity provider could not be reached',
  locked: 'Your account is locked',
  disabled: 'Your account is disabled',
};

export function LoginPage() {
  useDocumentTitle('Sign in');
  const { user, endedMessage, clearEndedMessage } = useSession();
  const location = useLocation();
  const from = (location.state as { from?: string } | null)?.from ?? '/';
  const login = useLogin();
  const personaLogin = usePersonaLogin();
  const personas = useListPersonasSafe();
  const firstRun = useFirstRun().data;
  const providers = useProviders().data ?? [];
  const [search] = useSearchParams();
  const providerError = search.get('error');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');

  if (user) return <Navigate to={from} replace />;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    clearEndedMessage();
    login.mutate({ username, password });
  };

  return (
    // The page's one landmark: axe's landmark-one-main and region rules (all content in a landmark).
    <Center component="main" mih="100vh" p="md">
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
              change it (Account → Change password).
            </Alert>
          )}
          {providerError && (
            <Alert color="red" role="alert" title="Sign-in with the identity provider failed">
              {PROVIDER_ERRORS[providerError] ?? 'The sign-in could not be completed'} (<Code>{providerError}</Code>). Nothing was changed; try again.
            </Alert>
          )}
          {providers.map((p) => (
            <Button key={p.login_url} component="a" href={p.login_url} variant="filled" color="dark">
              Sign in with {p.name}
            </Button>
          ))}
          {providers.length > 0 && <Divider label="or with a password" />}
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
