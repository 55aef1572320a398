import { Select } from '@mantine/core';
import { useProjectScope } from '../lib/project-scope';

const ALL = '__all__';

/** The header's project switcher: one project, or every project the user can read. */
export function ProjectSwitcher() {
  const { project, setProject, projects } = useProjectScope();
  const known = projects.some((p) => p.slug === project);
  const data = [
    { value: ALL, label: 'All projects' },
    ...projects.map((p) => ({ value: p.slug, label: p.archived ? `${p.name} (archived)` : p.name })),
    // A link to a project this user cannot read still says which one it asked for.
    ...(project && !known ? [{ value: project, label: project }] : []),
  ];
  return (
    <Select
      aria-label="Project"
      size="sm"
      w={{ base: 112, sm: 200 }}
      allowDeselect={false}
      data={data}
      value={project ?? ALL}
      onChange={(v) => setProject(!v || v === ALL ? null : v)}
      comboboxProps={{ withinPortal: true }}
    />
  );
}
