import { Alert, Button, Group, Paper, SegmentedControl, Switch, Text, Title } from '@mantine/core';
import { useEffect, useRef, useState } from 'react';
import type { Attempt } from '../../api/types';
import { fetchAttemptOutput, useAttemptTail } from './api/get-attempt-output';

const formatBytes = (n: number) => (n < 1024 ? `${n} B` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / (1 << 20)).toFixed(1)} MiB`);

/** Downloads everything the server kept of one attempt's output (the last 1 MiB) as a text file. */
async function download(jobId: number, number: number) {
  const part = await fetchAttemptOutput(jobId, number, 0);
  const url = URL.createObjectURL(new Blob([part.bytes], { type: 'text/plain;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = `job-${jobId}-attempt-${number}.txt`;
  link.click();
  URL.revokeObjectURL(url);
}

/**
 * What an attempt printed, tailed live while it runs. Follow keeps the view at the newest line (scrolling up turns it off);
 * Pause stops reading until resumed. Defaults to the newest attempt, and moves to a new one when a retry starts.
 */
export function OutputTail({ jobId, attempts }: { jobId: number; attempts: Attempt[] }) {
  const latest = attempts.at(-1)?.number ?? null;
  const [chosen, setChosen] = useState<number | null>(null);
  const number = chosen ?? latest;
  const [paused, setPaused] = useState(false);
  const [follow, setFollow] = useState(true);
  const tail = useAttemptTail(jobId, number, paused);
  const view = useRef<HTMLPreElement>(null);

  useEffect(() => {
    if (follow && view.current) view.current.scrollTop = view.current.scrollHeight;
  }, [tail.text, follow]);

  if (number === null) {
    return (
      <Paper withBorder p="md">
        <Title order={2} size="h5" mb="xs">
          Output
        </Title>
        <Text c="dimmed">No attempt has started yet.</Text>
      </Paper>
    );
  }
  const running = tail.status === 'RUNNING';
  // Follow is for output still being written: a finished attempt (or the job's last, finished
  // one) has no newest line to keep up with, so no toggle (review 2026-12-05 §5.14). Until the
  // first read says, the attempt's own status from the job decides.
  const live = tail.status ? running : attempts.find((a) => a.number === number)?.status === 'RUNNING';
  return (
    <Paper withBorder p="md">
      <Group justify="space-between" mb="xs" wrap="wrap">
        <Title order={2} size="h5">
          Output
        </Title>
        <Group gap="xs" wrap="wrap">
          {attempts.length > 1 && (
            <SegmentedControl
              size="xs"
              aria-label="Attempt"
              value={String(number)}
              onChange={(v) => setChosen(Number(v) === latest ? null : Number(v))}
              data={attempts.map((a) => ({ value: String(a.number), label: `#${a.number}` }))}
            />
          )}
          {live && <Switch size="sm" label="Follow" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} />}
          {running && (
            <Button size="xs" variant="default" onClick={() => setPaused((p) => !p)}>
              {paused ? 'Resume' : 'Pause'}
            </Button>
          )}
          <Button size="xs" variant="default" disabled={tail.total === 0} onClick={() => void download(jobId, number)}>
            Download
          </Button>
        </Group>
      </Group>
      {tail.error && (
        <Alert color="red" mb="xs" title="Could not read the output">
          {tail.error.message}
        </Alert>
      )}
      {tail.dropped && (
        <Text size="xs" c="dimmed" mb={4}>
          Earlier output was not kept (the last 1 MiB is).
        </Text>
      )}
      <pre
        ref={view}
        aria-label={`Output of attempt ${number}`}
        className="cp-output-tail"
        tabIndex={0}
        onScroll={(e) => {
          const el = e.currentTarget;
          const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 4;
          if (follow && !atBottom) setFollow(false);
        }}
      >
        {tail.text || (tail.status ? (running ? 'Nothing written yet…' : 'This attempt wrote nothing.') : 'Loading…')}
      </pre>
      <Text size="xs" c="dimmed" mt={4}>
        {formatBytes(tail.total)} written{running ? (paused ? ' · paused' : ' · live') : ''}
      </Text>
    </Paper>
  );
}
