import { Alert, Button, Group, Modal, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { GatedButton } from '../../components/GatedButton';
import { LocalDateTimeInput } from '../../components/LocalDateTimeInput';
import { usePauseSchedule } from './api/pause-schedule';
import { localInputToIso } from './local-time';

/** Pause until resumed, or until an instant (the server resumes it then, audited as system). */
export function PauseDialog({ id, name }: { id: number; name: string }) {
  const [open, setOpen] = useState(false);
  const [until, setUntil] = useState('');
  const [reason, setReason] = useState('');
  const pause = usePauseSchedule();
  const submit = async () => {
    try {
      await pause.mutateAsync({ id, until: localInputToIso(until), reason: reason.trim() || null });
    } catch {
      return; // shown below from pause.error
    }
    setOpen(false);
    setUntil('');
    setReason('');
  };
  return (
    <>
      <GatedButton operation="pauseSchedule" color="yellow" variant="light" onClick={() => setOpen(true)}>
        Pause
      </GatedButton>
      <Modal opened={open} onClose={() => setOpen(false)} title={`Pause ${name}?`} centered>
        <Stack>
          <Text size="sm">It stops firing; running jobs are not affected. Fires missed while paused are not run.</Text>
          <LocalDateTimeInput
            label="Resume by itself at (optional)"
            description="Your local time. Empty: paused until someone resumes it."
            value={until}
            onChange={setUntil}
          />
          <TextInput label="Reason (optional)" value={reason} onChange={(e) => setReason(e.currentTarget.value)} />
          {pause.error && (
            <Alert color="red" title="Not paused">
              {pause.error.message}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setOpen(false)}>
              Back
            </Button>
            <Button color="yellow" loading={pause.isPending} onClick={() => void submit()}>
              {until ? 'Pause until then' : 'Pause'}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
