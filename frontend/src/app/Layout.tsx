import { ActionIcon, AppShell, Badge, Burger, Button, Group, NavLink, Text, useComputedColorScheme, VisuallyHidden, useMantineColorScheme } from '@mantine/core';
import { lazy, Suspense, useState } from 'react';
import { useDisclosure } from '@mantine/hooks';
import { NavLink as RouterNavLink, Outlet, useLocation } from 'react-router';
import { useLogout } from '../api/queries/logout';
import type { Me } from '../api/types';
import { ProjectScopeProvider, useScopedSearch } from '../lib/project-scope';
import { mayCall, type GatedOperation } from '../lib/roles';
import { useScrollToTopOnNewPage } from '../lib/scroll-to-top';
import { useAfterFirstPaint } from '../lib/after-first-paint';
import { useSession } from '../lib/session';
import { CommandPaletteLauncher } from './CommandPaletteLauncher';
import { DeferredTooltip } from '../components/DeferredTooltip';
import { withLaterStyles } from '../components/with-later-styles';
import { ProjectSwitcherSlot } from './ProjectSwitcherSlot';

// The account menu is a Popover with floating-ui under it, not needed to paint a page: loaded on
// first use, so the first download on a slow network is smaller (bench/RESULTS.md, issue 23).
// The project switcher (a Select) loads after the first render (ProjectSwitcherSlot).
const loadAccountMenu = withLaterStyles(() => import('./AccountMenu'));
const AccountMenuOpened = lazy(async () => ({ default: (await loadAccountMenu()).AccountMenu }));

// Each page is shown to the roles that may call the operation it lists (lib/roles.ts mayCall:
// the installation's operations by the user's own role, the others by the role in the chosen
// project). The installation's pages form a section of their own, shown to instance ADMINs only.
const NAV: { to: string; label: string; operation: GatedOperation }[] = [
  { to: '/', label: 'Dashboard', operation: 'getStats' },
  { to: '/jobs', label: 'Jobs', operation: 'listJobs' },
  { to: '/schedules', label: 'Schedules', operation: 'listSchedules' },
  { to: '/queues', label: 'Queues', operation: 'listQueues' },
  { to: '/batches', label: 'Batches', operation: 'listBatches' },
  { to: '/projects', label: 'Projects', operation: 'listProjects' },
  { to: '/audit', label: 'Audit', operation: 'listAudit' },
  { to: '/notifications', label: 'Notifications', operation: 'listNotificationChannels' },
];
// Gated by an installation operation each, so a project's ADMIN never sees the section.
const INSTALLATION_NAV: { to: string; label: string; operation: GatedOperation }[] = [
  { to: '/users', label: 'Users', operation: 'listUsers' },
  { to: '/projects', label: 'Projects', operation: 'createProject' },
  { to: '/installation/sign-ins', label: 'Sign-ins', operation: 'verifyAudit' },
  { to: '/installation/audit-chain', label: 'Audit chain', operation: 'verifyAudit' },
  { to: '/chaos', label: 'Chaos', operation: 'listChaos' },
];

function ColorSchemeToggle() {
  const { setColorScheme } = useMantineColorScheme();
  const computed = useComputedColorScheme('light');
  const next = computed === 'dark' ? 'light' : 'dark';
  return (
    <DeferredTooltip label={`Switch to ${next} mode`}>
      <ActionIcon variant="default" size="lg" aria-label={`Switch to ${next} mode`} onClick={() => setColorScheme(next)}>
        {computed === 'dark' ? '☀' : '☾'}
      </ActionIcon>
    </DeferredTooltip>
  );
}

/**
 * The account button; its Menu is built on the first click, opened, rather than closed on every
 * page load: on a slow phone the closed menu was one of the larger costs of the first render, and
 * its code is not in the first download (bench/RESULTS.md, issue 23). Hovering or focusing the
 * button fetches it, so the click rarely waits.
 */
function AccountMenu({ user, onSignOut }: { user: Partial<Me>; onSignOut: () => Promise<void> }) {
  const [built, setBuilt] = useState(false);
  // The name comes from the content, so it always contains the visible text (axe
  // label-content-name-mismatch); the hidden words make it "Account: alice (ADMIN)". The
  // parentheses are inline (cp-sr-inline): an out-of-flow VisuallyHidden would make Chrome read
  // "( ADMIN )". On a phone the name shows and the role does not (it is in the menu): who is signed
  // in is the question a shared phone asks (review 2026-12-05 §5.12); name and role together
  // ended an OPERATOR's button 12 px past a 390 px screen.
  const content = (
    <>
      <VisuallyHidden component="span">Account: </VisuallyHidden>
      <Text span inherit truncate="end" maw={{ base: 96, sm: 240 }}>
        {user.username}
      </Text>
      <Badge size="sm" ml={6} visibleFrom="sm">
        <span className="cp-sr-inline">(</span>
        {user.role}
        <span className="cp-sr-inline">)</span>
      </Badge>
    </>
  );
  const button = (
    <Button
      variant="default"
      maw={{ base: 170, sm: 'none' }}
      aria-haspopup="menu"
      aria-expanded={false}
      onClick={() => setBuilt(true)}
      onPointerEnter={() => void loadAccountMenu()}
      onFocus={() => void loadAccountMenu()}
    >
      {content}
    </Button>
  );
  if (!built) return button;
  return (
    <Suspense fallback={button}>
      <AccountMenuOpened user={user} content={content} onSignOut={onSignOut} />
    </Suspense>
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
  const installation = INSTALLATION_NAV.filter((n) => mayCall(n.operation, user?.role, can));
  const location = useLocation();
  useScrollToTopOnNewPage();
  // The navigation's links (13 Mantine NavLinks, each a router NavLink) render once the first frame
  // (the page's heading and, on the dashboard, its numbers) is painted: on slow 4G with 4× CPU the
  // first render and commit took ~0.2–0.3 s less without them (bench/RESULTS.md, issue 45). The
  // shell mounts once, so a later page change never re-hides them; on a phone they are folded anyway.
  const navReady = useAfterFirstPaint();
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
            {user && <ProjectSwitcherSlot />}
          </Group>
          <Group wrap="nowrap" gap="xs">
            <ColorSchemeToggle />
            {user && <AccountMenu user={user as Partial<Me>} onSignOut={logout.mutateAsync} />}
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        {navReady && NAV.filter((n) => mayCall(n.operation, user?.role, can) && !installation.some((i) => i.to === n.to)).map((n) => (
          <NavLink
            key={n.to}
            component={RouterNavLink}
            to={n.to + scopedSearch}
            label={n.label}
            active={n.to === '/' ? location.pathname === '/' : location.pathname.startsWith(n.to)}
            onClick={close}
          />
        ))}
        {navReady && installation.length > 0 && (
          <div role="group" aria-labelledby="nav-installation">
            <Text id="nav-installation" size="xs" fw={700} c="dimmed" tt="uppercase" mt="md" mb={4} px="sm">
              Installation
            </Text>
            {installation.map((n) => (
              <NavLink
                key={n.to}
                component={RouterNavLink}
                to={n.to}
                label={n.label}
                active={location.pathname.startsWith(n.to)}
                onClick={close}
              />
            ))}
          </div>
        )}
      </AppShell.Navbar>
      <AppShell.Main id="main" tabIndex={-1}>
        <Outlet />
      </AppShell.Main>
      <CommandPaletteLauncher />
    </AppShell>
  );
}
