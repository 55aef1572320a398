import { Alert, Button, Center, Loader, Stack, Text, Title } from '@mantine/core';
import { createBrowserRouter, Link, Navigate, Outlet, useLocation, useRouteError, type RouteObject } from 'react-router';
import { AuditPage } from '../features/audit/AuditPage';
import { LoginPage } from '../features/auth/LoginPage';
import { ChaosPage } from '../features/chaos/ChaosPage';
import { CronBuilder } from '../features/cron-builder/CronBuilder';
import { DashboardPage } from '../features/dashboard/DashboardPage';
import { JobDetailPage } from '../features/jobs/JobDetailPage';
import { JobsPage } from '../features/jobs/JobsPage';
import { NewJobPage } from '../features/jobs/NewJobPage';
import { ScheduleDetailPage } from '../features/schedules/ScheduleDetailPage';
import { EditSchedulePage, NewSchedulePage } from '../features/schedules/ScheduleFormPages';
import { SchedulesPage } from '../features/schedules/SchedulesPage';
import { UsersPage } from '../features/users/UsersPage';
import { useSession } from '../lib/session';
import { Layout } from './Layout';

function RequireAuth() {
  const { user, loading } = useSession();
  const location = useLocation();
  if (loading) {
    return (
      <Center mih="100vh">
        <Loader aria-label="Loading session" />
      </Center>
    );
  }
  if (!user) return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />;
  return <Outlet />;
}

function NotFound() {
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

/** A render error in one page shows a message instead of a blank screen. */
function RouteError() {
  const error = useRouteError();
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

// The app is the only place that composes features: the schedule form gets the cron builder from here.
export const routes: RouteObject[] = [
  { path: '/login', element: <LoginPage /> },
  {
    element: <RequireAuth />,
    errorElement: <RouteError />,
    children: [
      {
        element: <Layout />,
        children: [
          {
            errorElement: <RouteError />,
            children: [
          { index: true, element: <DashboardPage /> },
          { path: 'jobs', element: <JobsPage /> },
          { path: 'jobs/new', element: <NewJobPage /> },
          { path: 'jobs/:id', element: <JobDetailPage /> },
          { path: 'schedules', element: <SchedulesPage /> },
          { path: 'schedules/new', element: <NewSchedulePage CronField={CronBuilder} /> },
          { path: 'schedules/:id', element: <ScheduleDetailPage /> },
          { path: 'schedules/:id/edit', element: <EditSchedulePage CronField={CronBuilder} /> },
          { path: 'audit', element: <AuditPage /> },
          { path: 'users', element: <UsersPage /> },
          { path: 'chaos', element: <ChaosPage /> },
          { path: '*', element: <NotFound /> },
            ],
          },
        ],
      },
    ],
  },
];

export const createRouter = () => createBrowserRouter(routes);
