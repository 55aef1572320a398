import type { Project } from '../api/types';

export const ALL_PROJECTS = '__all__';

/** The switcher's choices: every project the user can read, or one of them. */
export function projectOptions(project: string | null, projects: Project[]) {
  const known = projects.some((p) => p.slug === project);
  return [
    { value: ALL_PROJECTS, label: 'All projects' },
    ...projects.map((p) => ({ value: p.slug, label: p.archived ? `${p.name} (archived)` : p.name })),
    // A link to a project this user cannot read still says which one it asked for.
    ...(project && !known ? [{ value: project, label: project }] : []),
  ];
}
