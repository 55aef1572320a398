import { Button, Tooltip } from '@mantine/core';
import { useProjectScope } from '../lib/project-scope';
import { gateRole, neededRoleText, roleAtLeast, splitGate } from '../lib/roles';
import { useSession } from '../lib/session';
import type { GatedButtonProps } from './GatedButton';

/** A GatedButton for an object of `project`: the role that counts is the user's role in that
 * project (a list of every project mixes rows where the user may act and rows where it may not). */
export function ProjectGatedButton(gated: GatedButtonProps & { project: string }) {
  const [gate, { project, onClick, children, type = 'button', ...props }] = splitGate(gated);
  const role = gateRole(gate);
  const { roleIn, projects } = useProjectScope();
  const { can } = useSession();
  const allowed = projects.length ? roleAtLeast(roleIn(project), role) : can(role);
  // A VIEWER of the row's project can take no action on it: nothing to show (GatedButton).
  const readOnly = projects.length ? !roleAtLeast(roleIn(project), 'OPERATOR') : !can('OPERATOR');
  if (allowed) {
    return (
      <Button type={type} onClick={onClick} {...props}>
        {children}
      </Button>
    );
  }
  if (readOnly) return null;
  const reason = `${neededRoleText(role)} in project ${project}`;
  return (
    <Tooltip label={reason} withArrow events={{ hover: true, focus: true, touch: true }}>
      <Button type="button" {...props} data-disabled aria-disabled="true" title={reason} onClick={(e) => e.preventDefault()}>
        {children}
      </Button>
    </Tooltip>
  );
}
