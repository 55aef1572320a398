import { useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import { setScopedProject } from '../api/project-scope';
import { useProjects } from '../api/queries/list-projects';
import type { Project, Role } from '../api/types';
import { roleAtLeast } from './roles';
import { SessionContext, useSession, type Session } from './session';

/**
 * Which project the console looks at. It is in the URL (`?project=team-a`, so a link shows what
 * its sender saw) and remembered per user in localStorage (so a fresh tab opens where the user
 * was). No `project` = every project the user can read.
 *
 * Roles are per project: inside the scope, `useSession().can(role)` answers for the chosen
 * project (for "all projects", the highest role the user has anywhere — what the API checks
 * before it looks at an object's own project).
 */
export interface ProjectScope {
  project: string | null;
  setProject: (slug: string | null) => void;
  projects: Project[];
  roleIn: (slug: string) => Role | undefined;
}

const ProjectScopeContext = createContext<ProjectScope | null>(null);
const PARAM = 'project';
const STORAGE_PREFIX = 'cronplane.project.';
const storageKey = (userId: number) => `${STORAGE_PREFIX}${userId}`;

function remembered(userId: number | undefined): string | null {
  if (userId == null) return null;
  try {
    return window.localStorage.getItem(storageKey(userId)) || null;
  } catch {
    return null;
  }
}

function remember(userId: number | undefined, slug: string | null) {
  if (userId == null) return;
  try {
    window.localStorage.setItem(storageKey(userId), slug ?? '');
  } catch {
    // Private mode without storage: the URL still carries the choice.
  }
}

/** The project a page opened at `search` starts in for this user (the URL's, else the remembered
 * one; null = every project): what main.tsx needs to know before the first render, to tell whether
 * index.html's early GET /stats (every project) is the dashboard's own first request. */
export function initialProject(userId: number, search: string): string | null {
  return new URLSearchParams(search).get(PARAM) || remembered(userId);
}

/** True when a page opened at `search` starts in every project whoever signs in: no project in
 * the URL and none remembered on this browser. main.tsx asks this before GET /auth/me answers, to
 * take index.html's early GET /stats alongside it instead of after it. */
export function everyProjectForAnyone(search: string): boolean {
  if (new URLSearchParams(search).get(PARAM)) return false;
  try {
    const store = window.localStorage;
    for (let i = 0; i < store.length; i++) {
      const key = store.key(i);
      if (key?.startsWith(STORAGE_PREFIX) && store.getItem(key)) return false;
    }
    return true;
  } catch {
    return false;
  }
}

const RANK: Role[] = ['VIEWER', 'OPERATOR', 'ADMIN'];

export function ProjectScopeProvider({ children }: { children: ReactNode }) {
  const session = useSession();
  const userId = session.user?.id;
  const [params, setParams] = useSearchParams();
  const qc = useQueryClient();
  const projects = useProjects(session.user != null);
  const fromUrl = params.get(PARAM);
  const project = fromUrl || remembered(userId);
  // Set while rendering, before any child's query runs, so the first request is already scoped.
  setScopedProject(project);

  // A remembered project the URL does not carry yet goes into it (replace: no extra history entry).
  useEffect(() => {
    if (!fromUrl && project) {
      setParams(
        (prev) => {
          const next = new URLSearchParams(prev);
          next.set(PARAM, project);
          return next;
        },
        { replace: true },
      );
    } else if (fromUrl) {
      remember(userId, fromUrl);
    }
  }, [fromUrl, project, setParams, userId]);

  // Everything loaded for the previous project is stale: refetch under the new scope.
  const previous = useRef(project);
  useEffect(() => {
    if (previous.current === project) return;
    previous.current = project;
    void qc.resetQueries({ predicate: (q) => q.queryKey[0] !== 'auth' && q.queryKey[0] !== 'projects' });
  }, [project, qc]);

  const setProject = useCallback(
    (slug: string | null) => {
      remember(userId, slug);
      setParams(
        (prev) => {
          const next = new URLSearchParams(prev);
          next.delete(PARAM);
          next.delete('cursor');
          next.delete('back');
          if (slug) next.set(PARAM, slug);
          return next;
        },
        { replace: false },
      );
    },
    [setParams, userId],
  );

  const list = useMemo(() => projects.data ?? [], [projects.data]);
  const roleIn = useCallback((slug: string) => list.find((p) => p.slug === slug)?.role as Role | undefined, [list]);
  const scope = useMemo<ProjectScope>(() => ({ project, setProject, projects: list, roleIn }), [project, setProject, list, roleIn]);

  const refined = useMemo<Session>(() => {
    if (!projects.data) return session;
    const effective: Role | undefined = project
      ? roleIn(project)
      : list.reduce<Role | undefined>((best, p) => (best && RANK.indexOf(best) >= RANK.indexOf(p.role as Role) ? best : (p.role as Role)), undefined);
    return { ...session, can: (needed: Role) => roleAtLeast(effective, needed) };
  }, [session, projects.data, project, roleIn, list]);

  return (
    <ProjectScopeContext.Provider value={scope}>
      <SessionContext.Provider value={refined}>{children}</SessionContext.Provider>
    </ProjectScopeContext.Provider>
  );
}

const NO_SCOPE: ProjectScope = { project: null, setProject: () => {}, projects: [], roleIn: () => undefined };

/** The chosen project; outside the provider (tests of one page) there is no scope. */
export function useProjectScope(): ProjectScope {
  return useContext(ProjectScopeContext) ?? NO_SCOPE;
}

/** `?project=…` for a link, so navigation keeps the scope in the URL. */
export function useScopedSearch(): string {
  const { project } = useProjectScope();
  return project ? `?${PARAM}=${encodeURIComponent(project)}` : '';
}
