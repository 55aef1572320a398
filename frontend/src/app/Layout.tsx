import { ActionIcon, AppShell, Badge, Burger, Button, Group, Menu, NavLink, Text, Tooltip, useComputedColorScheme, VisuallyHidden, useMantineColorScheme } from '@mantine/core';
import { useState } from 'react';
import { useDisclosure } from '@mantine/hooks';
import { NavLink as RouterNavLink, Outlet, useLocation } from 'react-router';
import { api } from '../api/client';
import { useLogout } from '../api/queries/logout';
import type { Me } from '../api/types';
import { ProjectScopeProvider, useScopedSearch } from '../lib/project-scope';
import { roleAtLeast, roleFor, type GatedOperation } from '../lib/roles';
import { useScrollToTopOnNewPage } from '../lib/scroll-to-top';
import { useSession } from '../lib/session';
import { CommandPaletteLauncher } from './CommandPaletteLauncher';
import { ProjectSwitcher } from './ProjectSwitcher';

// Each page is shown to the roles that may call the operation it lists. `instance`: the page
// belongs to the installation, gated on the user's own role rather than the role in the chosen
// project (a project's ADMIN is not an ADMIN of users or chaos).
const NAV: { to: string; label: string; operation: GatedOperation; instance?: boolean }[] = [
  { to: '/', label: 'Dashboard', operation: 'getStats' },
  { to: '/jobs', label: 'Jobs', operation: 'listJobs' },
  { to: '/schedules', label: 'Schedules', operation: 'listSchedules' },
  { to: '/queues', label: 'Queues', operation: 'listQueues' },
  { to: '/projects', label: 'Projects', operation: 'listProjects' },
  { to: '/audit', label: 'Audit', operation: 'listAudit' },
  { to: '/notifications', label: 'Notifications', operation: 'listNotificationChannels' },
  { to: '/users', label: 'Users', operation: 'listUsers', instance: true },
  { to: '/chaos', label: 'Chaos', operation: 'listChaos', instance: true },
];

function ColorSchemeToggle() {
  const { setColorScheme } = useMantineColorScheme();
  const computed = useComputedColorScheme('light');
  const next = computed === 'dark' ? 'light' : 'dark';
  return (
    <Tooltip label={`Switch to ${next} mode`}>
      <ActionIcon variant="default" size="lg" aria-label={`Switch to ${next} mode`} onClick={() => setColorScheme(next)}>
        {computed === 'dark' ? '☀' : '☾'}
      </ActionIcon>
    </Tooltip>
  );
}

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
 * The account button; its Menu (a Popover with floating-ui's positioning) is built on the first
 * click, opened, rather than closed on every page load: on a slow phone the closed menu was one of
 * the larger costs of the first render (bench/RESULTS.md, issue 23). Mantine's menu moves focus
 * into its items when it opens and back to the button when it closes.
 */
function AccountMenu({ user, onSignOut }: { user: Partial<Me>; onSignOut: () => Promise<void> }) {
  const [built, setBuilt] = useState(false);
  // The name comes from the content, so it always contains the visible text (axe
  // label-content-name-mismatch); the hidden words make it "Account: alice (ADMIN)". The
  // parentheses are inline (cp-sr-inline): an out-of-flow VisuallyHidden would make Chrome read
  // "( ADMIN )". On a phone only the role shows (the name is still in the label): with the name,
  // an OPERATOR's button ended 12 px past a 390 px screen.
  const content = (
    <>
      <VisuallyHidden component="span">Account: </VisuallyHidden>
      <Text span inherit truncate="end" maw={240} className="cp-sr-below-sm">
        {user.username}
      </Text>
      <Badge size="sm" ml={6}>
        <span className="cp-sr-inline">(</span>
        {user.role}
        <span className="cp-sr-inline">)</span>
      </Badge>
    </>
  );
  if (!built) {
    return (
      <Button variant="default" maw={{ base: 170, sm: 'none' }} aria-haspopup="menu" aria-expanded={false} onClick={() => setBuilt(true)}>
        {content}
      </Button>
    );
  }
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
        <Menu.Item onClick={() => signOut(onSignOut, Boolean(user.identity))}>Sign out</Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

/** The shell inside the project scope: lists, role gates and links follow the chosen project. */
export function Layout() {
  return (
    <ProjectScopeProvider>
      <Shell />
    </ProjectScopeProvider>
  );
}

function Shell() {
  const [opened, { toggle, close }] = useDisclosure();
  const scopedSearch = useScopedSearch();
  const { user, can } = useSession();
  const logout = useLogout();
  const location = useLocation();
  useScrollToTopOnNewPage();
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 200, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <a href="#main" className="cp-skip-link">
        Skip to content
      </a>
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Text fw={700} size="lg" visibleFrom="xs">
              cronplane
            </Text>
            {user && <ProjectSwitcher />}
          </Group>
          <Group wrap="nowrap" gap="xs">
            <ColorSchemeToggle />
            {user && <AccountMenu user={user as Partial<Me>} onSignOut={logout.mutateAsync} />}
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        {NAV.filter((n) => {
          const needed = roleFor(n.operation);
          return n.instance ? roleAtLeast(user?.role, needed) : can(needed);
        }).map((n) => (
          <NavLink
            key={n.to}
            component={RouterNavLink}
            to={n.to + scopedSearch}
            label={n.label}
            active={n.to === '/' ? location.pathname === '/' : location.pathname.startsWith(n.to)}
            onClick={close}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main id="main" tabIndex={-1}>
        <Outlet />
      </AppShell.Main>
      <CommandPaletteLauncher />
    </AppShell>
  );
}
