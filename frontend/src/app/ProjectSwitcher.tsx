import { Select } from '@mantine/core';
import { useProjectScope } from '../lib/project-scope';
import { ALL_PROJECTS, projectOptions } from './project-options';

/** The header's project switcher: one project, or every project the user can read. */
export function ProjectSwitcher() {
  const { project, setProject, projects } = useProjectScope();
  return (
    <Select
      aria-label="Project"
      size="sm"
      w={{ base: 136, sm: 200 }}
      allowDeselect={false}
      data={projectOptions(project, projects)}
      value={project ?? ALL_PROJECTS}
      onChange={(v) => setProject(!v || v === ALL_PROJECTS ? null : v)}
      comboboxProps={{ withinPortal: true }}
    />
  );
}
