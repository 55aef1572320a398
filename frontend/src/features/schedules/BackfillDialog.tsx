import { Alert, Button, Group, List, Modal, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { GatedButton } from '../../components/GatedButton';
import { LocalDateTimeInput } from '../../components/LocalDateTimeInput';
import { formatExact } from '../../lib/time';
import { useBackfillSchedule } from './api/backfill-schedule';
import { isoToLocalInput, localInputToIso } from './local-time';

type Preview = { fire_times: string[]; enqueued: number; already_present: number; dry_run: boolean };

/**
 * Fill a past window: a dry run lists the fire times first (and how many already have a job);
 * enqueuing uses the schedule's own fire keys, so repeating it, or overlapping real fires, adds nothing.
 */
export function BackfillDialog({ id, name }: { id: number; name: string }) {
  const [open, setOpen] = useState(false);
  const now = new Date();
  const [after, setAfter] = useState(isoToLocalInput(new Date(now.getTime() - 24 * 3600_000)));
  const [before, setBefore] = useState(isoToLocalInput(now));
  const [preview, setPreview] = useState<Preview | null>(null);
  const [done, setDone] = useState<Preview | null>(null);
  const backfill = useBackfillSchedule();
  const window = () => ({ id, after: localInputToIso(after) ?? '', before: localInputToIso(before) ?? '' });
  const run = async (dry_run: boolean) => {
    try {
      const result = await backfill.mutateAsync({ ...window(), dry_run });
      if (dry_run) setPreview(result);
      else setDone(result);
    } catch {
      /* shown below from backfill.error */
    }
  };
  const missing = preview ? preview.fire_times.length - preview.already_present : 0;
  const close = () => {
    setOpen(false);
    setPreview(null);
    setDone(null);
    backfill.reset();
  };
  return (
    <>
      <GatedButton operation="backfillSchedule" variant="default" onClick={() => setOpen(true)}>
        Backfill…
      </GatedButton>
      <Modal opened={open} onClose={close} title={`Backfill ${name}`} centered size="lg">
        <Stack>
          <Text size="sm">Enqueue the fire times of a past window that have no job yet (at most 1,000 per call).</Text>
          <Group grow>
            <LocalDateTimeInput label="After (exclusive)" value={after} onChange={(v) => { setAfter(v); setPreview(null); }} />
            <LocalDateTimeInput label="Before (inclusive)" value={before} onChange={(v) => { setBefore(v); setPreview(null); }} />
          </Group>
          {backfill.error && (
            <Alert color="red" title="Refused">
              {backfill.error.message}
            </Alert>
          )}
          {preview && !done && (
            <Alert color="blue" title={`${preview.fire_times.length} fire times, ${missing} to enqueue`} data-testid="backfill-preview">
              <Text size="sm">{preview.already_present} already have a job.</Text>
              <List size="xs" mt="xs">
                {preview.fire_times.slice(0, 12).map((t) => (
                  <List.Item key={t}>{formatExact(t)}</List.Item>
                ))}
                {preview.fire_times.length > 12 && <List.Item>…and {preview.fire_times.length - 12} more</List.Item>}
              </List>
            </Alert>
          )}
          {done && (
            <Alert color="green" title={`Enqueued ${done.enqueued}`} data-testid="backfill-done">
              {done.already_present} of {done.fire_times.length} fire times already had a job.
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Close
            </Button>
            <Button variant="light" loading={backfill.isPending && !preview} onClick={() => void run(true)}>
              Preview
            </Button>
            <Button disabled={!preview || missing === 0 || done !== null} loading={backfill.isPending && !!preview} onClick={() => void run(false)}>
              Enqueue {preview ? missing : ''}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
