import { ComboboxChevron, Input } from '@mantine/core';
import { useProjectScope } from '../lib/project-scope';
import { ALL_PROJECTS, projectOptions } from './project-options';

/**
 * What the switcher looks like while its code loads (a Select is a Combobox, a Popover and
 * floating-ui, none of which the dashboard's first paint needs: bench/RESULTS.md, issue 23):
 * the same box, size and text, not yet operable, so it is out of the tab order and of the
 * accessibility tree for that moment rather than a control that ignores its user.
 */
export function ProjectSwitcherPlaceholder() {
  const { project, projects } = useProjectScope();
  const value = project ?? ALL_PROJECTS;
  const label = projectOptions(project, projects).find((o) => o.value === value)?.label ?? '';
  return (
    <Input
      aria-hidden
      tabIndex={-1}
      readOnly
      pointer
      size="sm"
      w={{ base: 136, sm: 200 }}
      value={label}
      rightSection={<ComboboxChevron size="sm" />}
      rightSectionPointerEvents="none"
    />
  );
}
