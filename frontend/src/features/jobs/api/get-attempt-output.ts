import { useEffect, useRef, useState } from 'react';
import { api } from '../../../api/client';
import { toApiError } from '../../../api/problem';

export type OutputPart = {
  bytes: Uint8Array<ArrayBuffer>;
  /** Where `bytes` start in everything the attempt wrote (later than asked: older output was not kept). */
  offset: number;
  nextOffset: number;
  total: number;
  status: string;
};

/** GET /jobs/{id}/attempts/{n}/output?offset=: raw bytes, so a multi-byte character split between two reads decodes whole. */
export async function fetchAttemptOutput(jobId: number, number: number, offset: number): Promise<OutputPart> {
  const { data, error, response } = await api.GET('/api/v1/jobs/{job_id}/attempts/{number}/output', {
    params: { path: { job_id: jobId, number }, query: { offset } },
    parseAs: 'arrayBuffer',
  });
  if (!response.ok) throw toApiError(error, response);
  const bytes = new Uint8Array((data as ArrayBuffer | undefined) ?? new ArrayBuffer(0));
  const header = (name: string, fallback: number) => Number(response.headers.get(name) ?? fallback);
  const start = header('X-Output-Offset', offset);
  return {
    bytes,
    offset: start,
    nextOffset: header('X-Output-Next-Offset', start + bytes.length),
    total: header('X-Output-Bytes', start + bytes.length),
    status: response.headers.get('X-Attempt-Status') ?? '',
  };
}

/** The console keeps at most this much of a tail in memory (the server keeps the last 1 MiB). */
const MAX_CHARS = 1 << 20;
export const TAIL_POLL_MS = 1000;

export type Tail = { text: string; dropped: boolean; status: string; total: number; error: Error | null };

/**
 * The attempt's output, read from where the last read stopped: every `TAIL_POLL_MS` while the attempt runs and `paused` is
 * false, then once more after it ended (the worker writes the last output before the outcome, so that read is complete).
 */
export function useAttemptTail(jobId: number, number: number | null, paused: boolean): Tail {
  const [tail, setTail] = useState<Tail>({ text: '', dropped: false, status: '', total: 0, error: null });
  const cursor = useRef({ key: '', offset: 0, decoder: new TextDecoder() });
  useEffect(() => {
    if (number === null) return;
    const key = `${jobId}/${number}`;
    if (cursor.current.key !== key) {
      cursor.current = { key, offset: 0, decoder: new TextDecoder() };
      setTail({ text: '', dropped: false, status: '', total: 0, error: null });
    }
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      try {
        const part = await fetchAttemptOutput(jobId, number, cursor.current.offset);
        if (stopped) return;
        const dropped = part.offset > cursor.current.offset;
        cursor.current.offset = part.nextOffset;
        const chunk = cursor.current.decoder.decode(part.bytes, { stream: part.status === 'RUNNING' });
        setTail((t) => {
          const text = (t.text + chunk).slice(-MAX_CHARS);
          return { text, dropped: t.dropped || dropped || text.length < t.text.length + chunk.length, status: part.status, total: part.total, error: null };
        });
        if (part.status === 'RUNNING' && !paused) timer = setTimeout(read, TAIL_POLL_MS);
      } catch (e) {
        if (!stopped) setTail((t) => ({ ...t, error: e as Error }));
      }
    };
    if (!paused || cursor.current.offset === 0) void read();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [jobId, number, paused]);
  return tail;
}
