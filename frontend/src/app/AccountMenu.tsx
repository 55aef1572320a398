import { Button, Menu } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { api } from '../api/client';
import type { Me } from '../api/types';

/** Where the roles came from: the identity provider's groups (per the role map) or a local account. */
function RoleSource({ user }: { user: Partial<Me> }) {
  const identity = user.identity;
  if (!identity) {
    return <Menu.Label>Local account: role set by an administrator</Menu.Label>;
  }
  const source = (identity.role_source ?? {}) as { instance?: string[]; projects?: Record<string, string[]> };
  return (
    <>
      <Menu.Label>Signed in through {identity.issuer}</Menu.Label>
      <Menu.Label>Role {user.role} from: {(source.instance ?? []).join(', ') || 'project groups only'}</Menu.Label>
      {Object.entries(source.projects ?? {}).map(([project, groups]) => (
        <Menu.Label key={project}>
          Project {project}: {groups.join(', ')}
        </Menu.Label>
      ))}
    </>
  );
}

/** Our sign-out first; then, for a provider sign-in, the provider's own (RP-initiated logout) when it offers one. */
async function signOut(ours: () => Promise<void>, viaProvider: boolean) {
  await ours();
  if (!viaProvider) return;
  const { data } = await api.GET('/api/v1/auth/oidc/logout');
  if (data?.url) window.location.assign(data.url);
}

/**
 * The account menu, opened: Layout.tsx loads this module on the button's first click (a Menu is a
 * Popover with floating-ui's positioning). Mantine's menu moves focus into its items when it opens
 * and back to the button when it closes.
 */
export function AccountMenu({ user, content, onSignOut }: { user: Partial<Me>; content: ReactNode; onSignOut: () => Promise<void> }) {
  return (
    <Menu position="bottom-end" defaultOpened>
      <Menu.Target>
        <Button variant="default" maw={{ base: 170, sm: 'none' }}>
          {content}
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <RoleSource user={user} />
        <Menu.Divider />
        <Menu.Item component={Link} to="/account">
          Your account (tokens, password)
        </Menu.Item>
        <Menu.Item onClick={() => signOut(onSignOut, Boolean(user.identity))}>Sign out</Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}
