import { Alert, Button, Center, Loader, Stack, Text, Title } from '@mantine/core';
import { Component, lazy, Suspense, type ComponentType, type ReactNode } from 'react';
import { Link, Navigate, Outlet, useLocation, type RouteObject } from 'react-router';
import { LoginPage } from '../features/auth/LoginPage';
import { useSession } from '../lib/session';
import { useDocumentTitle } from '../components/PageHeader';
import { withLaterStyles } from '../components/with-later-styles';
// The dashboard is the landing page, so it is in the entry chunk: a lazy chunk would be one more
// round trip (plus a cascade of its small shared chunks) after the entry has run — ~2.4 s on slow
// 4G (bench/RESULTS.md). Its chart (recharts, 290 KB) is lazy inside it. Every other page is its
// own chunk: the login page and the dashboard do not load the cron builder or cronstrue.
import { DashboardPage } from '../features/dashboard/DashboardPage';
// Each lazy part loads with the stylesheet of the Mantine components kept out of the first one.
const page = <K extends string>(load: () => Promise<Record<K, ComponentType<never>>>, name: K) =>
  lazy(async () => ({ default: (await withLaterStyles(load)())[name] as ComponentType }));
const scheduleForms = withLaterStyles(() => import('../features/schedules/ScheduleFormPages'));
const AuditPage = page(() => import('../features/audit/AuditPage'), 'AuditPage');
const ChaosPage = page(() => import('../features/chaos/ChaosPage'), 'ChaosPage');
const JobDetailPage = page(() => import('../features/jobs/JobDetailPage'), 'JobDetailPage');
const JobsPage = page(() => import('../features/jobs/JobsPage'), 'JobsPage');
const NewJobPage = page(() => import('../features/jobs/NewJobPage'), 'NewJobPage');
const ScheduleDetailPage = page(() => import('../features/schedules/ScheduleDetailPage'), 'ScheduleDetailPage');
const SchedulesPage = page(() => import('../features/schedules/SchedulesPage'), 'SchedulesPage');
const UsersPage = page(() => import('../features/users/UsersPage'), 'UsersPage');
const QueuesPage = page(() => import('../features/queues/QueuesPage'), 'QueuesPage');
const BatchesPage = page(() => import('../features/batches/BatchesPage'), 'BatchesPage');
const BatchDetailPage = page(() => import('../features/batches/BatchDetailPage'), 'BatchDetailPage');
const ProjectsPage = page(() => import('../features/projects/ProjectsPage'), 'ProjectsPage');
const ProjectDetailPage = page(() => import('../features/projects/ProjectDetailPage'), 'ProjectDetailPage');
const NotificationsPage = page(() => import('../features/notifications/NotificationsPage'), 'NotificationsPage');
const AccountPage = page(() => import('../features/account/AccountPage'), 'AccountPage');
const SignInsPage = page(() => import('../features/audit/InstallationAuditPages'), 'SignInsPage');
const AuditChainPage = page(() => import('../features/audit/InstallationAuditPages'), 'AuditChainPage');
const NewSchedulePage = lazy(async () => ({ default: (await scheduleForms()).NewSchedulePage }));
const EditSchedulePage = lazy(async () => ({ default: (await scheduleForms()).EditSchedulePage }));
const CronBuilder = lazy(async () => ({ default: (await withLaterStyles(() => import('../features/cron-builder/CronBuilder'))()).CronBuilder }));
import { Layout } from './Layout';

function RequireAuth() {
  const { user, loading } = useSession();
  const location = useLocation();
  if (loading) {
    return (
      <Center mih="100vh">
        <Loader role="status" aria-label="Loading session" />
      </Center>
    );
  }
  if (!user) return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />;
  return <Outlet />;
}

function NotFound() {
  useDocumentTitle('Not found');
  return (
    <Stack>
      <Title order={1} size="h2">
        Not found
      </Title>
      <Text>
        No page here. <Link to="/">Back to the dashboard</Link>
      </Text>
    </Stack>
  );
}

/** While a page's chunk loads; the layout (header, navigation) stays in place. */
function PageSuspense() {
  return (
    <Suspense
      fallback={
        <Center mih="40vh">
          <Loader role="status" aria-label="Loading page" />
        </Center>
      }
    >
      <Outlet />
    </Suspense>
  );
}

/** A render error in one page shows a message instead of a blank screen. */
function RouteError({ error }: { error: unknown }) {
  return (
    <Center mih="60vh" p="md">
      <Alert color="red" title="This page failed to render" maw={560}>
        <Stack>
          <Text size="sm">{error instanceof Error ? error.message : String(error)}</Text>
          <Button variant="light" onClick={() => window.location.reload()}>
            Reload
          </Button>
        </Stack>
      </Alert>
    </Center>
  );
}

class ErrorBoundary extends Component<{ resetKey: string; children: ReactNode }, { failed: boolean; error: unknown }> {
  state = { failed: false, error: undefined as unknown };

  static getDerivedStateFromError(error: unknown) {
    return { failed: true, error };
  }

  componentDidUpdate(previous: { resetKey: string }) {
    if (this.state.failed && previous.resetKey !== this.props.resetKey) this.setState({ failed: false, error: undefined });
  }

  render() {
    return this.state.failed ? <RouteError error={this.state.error} /> : this.props.children;
  }
}

/**
 * What a route's `errorElement` did in a data router: the console uses the plain router
 * (<BrowserRouter>, no loaders or actions), whose code is ~14 KB brotli smaller in the first
 * download (bench/RESULTS.md, issue 23). Moving to another page clears the error, as before.
 */
export function RouteErrorBoundary({ children }: { children: ReactNode }) {
  const { pathname } = useLocation();
  return <ErrorBoundary resetKey={pathname}>{children}</ErrorBoundary>;
}

// The app is the only place that composes features: the schedule form gets the cron builder from here.
export const routes: RouteObject[] = [
  { path: '/login', element: <LoginPage /> },
  {
    element: (
      <RouteErrorBoundary>
        <RequireAuth />
      </RouteErrorBoundary>
    ),
    children: [
      {
        element: <Layout />,
        children: [
          {
            element: (
              <RouteErrorBoundary>
                <PageSuspense />
              </RouteErrorBoundary>
            ),
            children: [
          { index: true, element: <DashboardPage /> },
          { path: 'jobs', element: <JobsPage /> },
          { path: 'jobs/new', element: <NewJobPage /> },
          { path: 'jobs/:id', element: <JobDetailPage /> },
          { path: 'schedules', element: <SchedulesPage /> },
          { path: 'schedules/new', element: <NewSchedulePage CronField={CronBuilder} /> },
          { path: 'schedules/:id', element: <ScheduleDetailPage /> },
          { path: 'schedules/:id/edit', element: <EditSchedulePage CronField={CronBuilder} /> },
          { path: 'queues', element: <QueuesPage /> },
          { path: 'batches', element: <BatchesPage /> },
          { path: 'batches/:id', element: <BatchDetailPage /> },
          { path: 'projects', element: <ProjectsPage /> },
          { path: 'projects/:slug', element: <ProjectDetailPage /> },
          { path: 'audit', element: <AuditPage /> },
          { path: 'users', element: <UsersPage /> },
          { path: 'chaos', element: <ChaosPage /> },
          { path: 'installation/sign-ins', element: <SignInsPage /> },
          { path: 'installation/audit-chain', element: <AuditChainPage /> },
          { path: 'notifications', element: <NotificationsPage /> },
          { path: 'account', element: <AccountPage /> },
          { path: '*', element: <NotFound /> },
            ],
          },
        ],
      },
    ],
  },
];
