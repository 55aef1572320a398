import { Button, Tooltip, type ButtonProps } from '@mantine/core';
import type { MouseEvent, ReactNode } from 'react';
import { neededRoleText, roleFor, type GatedOperation } from '../lib/roles';
import { useSession } from '../lib/session';

export interface GatedButtonProps extends ButtonProps {
  /** The API operation the button triggers: its required role gates the button. */
  operation: GatedOperation;
  onClick?: (e: MouseEvent<HTMLButtonElement>) => void;
  children: ReactNode;
  type?: 'button' | 'submit';
}

/**
 * A button for an action that needs a role. Without it the button stays visible and focusable but
 * disabled (aria-disabled, so keyboard users reach it and hear why), with a tooltip naming the role.
 */
export function GatedButton({ operation, onClick, children, type = 'button', ...props }: GatedButtonProps) {
  const { can } = useSession();
  const role = roleFor(operation);
  if (can(role)) {
    return (
      <Button type={type} onClick={onClick} {...props}>
        {children}
      </Button>
    );
  }
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
