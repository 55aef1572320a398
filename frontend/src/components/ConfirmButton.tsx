import { Button, Group, Modal, Stack, Text, type ButtonProps } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useState, type ReactNode } from 'react';
import { splitGate, type Gate } from '../lib/roles';
import { ErrorAlert } from './ErrorAlert';
import { GatedButton } from './GatedButton';

type ConfirmButtonProps = ButtonProps & Gate & {
  title: string;
  message: ReactNode;
  confirmLabel: string;
  onConfirm: () => Promise<unknown>;
  children: ReactNode;
};

/** A role-gated button whose action runs only after the user confirms it in a dialog. */
export function ConfirmButton(gated: ConfirmButtonProps) {
  const [gate, { title, message, confirmLabel, onConfirm, children, ...props }] = splitGate(gated);
  const [opened, { open, close }] = useDisclosure(false);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // "Keep it" answers a destructive question (cancel this job? delete it?) without a second
  // "Cancel"; a dialog that only starts something (run now, resume, retry) is simply cancelled.
  const color = props.color ?? 'red';
  const dismissLabel = color === 'red' ? 'Keep it' : 'Cancel';
  const confirm = async () => {
    setPending(true);
    setError(null);
    try {
      await onConfirm();
      close();
    } catch (e) {
      setError(e);
    } finally {
      setPending(false);
    }
  };
  return (
    <>
      <GatedButton {...gate} onClick={open} {...props}>
        {children}
      </GatedButton>
      <Modal opened={opened} onClose={close} title={title} centered>
        <Stack>
          <Text>{message}</Text>
          <ErrorAlert error={error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              {dismissLabel}
            </Button>
            <Button color={color} loading={pending} onClick={confirm}>
              {confirmLabel}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

