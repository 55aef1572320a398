import { Button, Tooltip, type ButtonProps } from '@mantine/core';
import type { MouseEvent, ReactNode } from 'react';
import { gateRole, isReadOnly, neededRoleText, splitGate, type Gate } from '../lib/roles';
import { useSession } from '../lib/session';

/** ``operation``: the API operation the button triggers; its required role gates the button. */
export type GatedButtonProps = ButtonProps & Gate & {
  onClick?: (e: MouseEvent<HTMLButtonElement>) => void;
  children: ReactNode;
  type?: 'button' | 'submit';
};

/**
 * A button for an action that needs a role. Without it the button stays visible and focusable but
 * disabled (aria-disabled, so keyboard users reach it and hear why), with a tooltip naming the role;
 * a read-only user (a VIEWER, who can use no action) is not shown it at all (PageHeader says
 * "read-only" once instead).
 */
export function GatedButton(gated: GatedButtonProps) {
  const [gate, { onClick, children, type = 'button', ...props }] = splitGate(gated);
  const { can } = useSession();
  const role = gateRole(gate);
  if (can(role)) {
    return (
      <Button type={type} onClick={onClick} {...props}>
        {children}
      </Button>
    );
  }
  if (isReadOnly(can)) return null;
  const reason = neededRoleText(role);
  return (
    <Tooltip label={reason} withArrow events={{ hover: true, focus: true, touch: true }}>
      <Button
        type="button"
        {...props}
        data-disabled
        aria-disabled="true"
        title={reason}
        onClick={(e) => e.preventDefault()}
      >
        {children}
      </Button>
    </Tooltip>
  );
}
