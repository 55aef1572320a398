import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Attempt } from '../../api/types';
import { anAttempt } from '../../test/factories';
import { fakeApi, http, renderScreen } from '../../test/render';
import { OutputTail } from './OutputTail';

const attempt = (number: number, status: Attempt['status']): Attempt =>
  anAttempt({ number, status, worker_id: 'w', started_at: '2026-12-02T01:00:00Z', lease_expires_at: '2026-12-02T01:01:00Z', finished_at: null });

/** Serves an attempt's output as the API does: the bytes after `offset`, with the offset headers. */
function outputApi(parts: { at: number; bytes: number[]; status: string; total: number }[]) {
  return fakeApi(
    http.get('/api/v1/jobs/{job_id}/attempts/{number}/output', ({ params, query, response }) => {
      expect(params).toMatchObject({ job_id: '7', number: '1' });
      const offset = Number(query.get('offset') ?? 0);
      const part = parts.find((p) => p.at >= offset) ?? { at: offset, bytes: [], status: parts.at(-1)!.status, total: parts.at(-1)!.total };
      // Raw bytes (a character may be split between reads), which the typed text() cannot send.
      return response.untyped(new Response(new Uint8Array(part.bytes), {
        headers: {
          'Content-Type': 'text/plain; charset=utf-8',
          'X-Output-Offset': String(part.at),
          'X-Output-Next-Offset': String(part.at + part.bytes.length),
          'X-Output-Bytes': String(part.total),
          'X-Attempt-Status': part.status,
        },
      }));
    }),
  );
}

const utf8 = (s: string) => [...new TextEncoder().encode(s)];

afterEach(() => vi.unstubAllGlobals());

describe('output tail', () => {
  it('reads on from where it stopped while the attempt runs, a character split between reads decoding whole', async () => {
    const first = utf8('line 1\ncaf');
    const split = utf8('é\nline 2\n'); // é's two bytes arrive in two reads
    const api = outputApi([
      { at: 0, bytes: [...first, ...split.slice(0, 1)], status: 'RUNNING', total: first.length + 1 },
      { at: first.length + 1, bytes: split.slice(1), status: 'SUCCEEDED', total: first.length + split.length },
    ]);
    vi.stubGlobal('fetch', api.fetch);
    renderScreen(<OutputTail jobId={7} attempts={[attempt(1, 'RUNNING')]} />);
    const view = await screen.findByLabelText('Output of attempt 1');
    await waitFor(() => expect(view.textContent).toBe('line 1\ncafé\nline 2\n'), { timeout: 4000 });
    const offsets = api.calls.map((c) => new URL(c.url).searchParams.get('offset'));
    expect(offsets).toEqual(['0', String(first.length + 1)]);
    expect(screen.queryByRole('button', { name: 'Pause' })).not.toBeInTheDocument();
  });

  it('says when earlier output was not kept, and offers pause while running', async () => {
    vi.stubGlobal('fetch', outputApi([{ at: 5000, bytes: utf8('tail\n'), status: 'RUNNING', total: 5005 }]).fetch);
    renderScreen(<OutputTail jobId={7} attempts={[attempt(1, 'RUNNING')]} />);
    expect(await screen.findByText('Earlier output was not kept (the last 1 MiB is).')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Pause' }));
    expect(screen.getByRole('button', { name: 'Resume' })).toBeInTheDocument();
    expect(screen.getByText(/4\.9 KiB written · paused/)).toBeInTheDocument();
  });

  it('an attempt that wrote nothing says so', async () => {
    vi.stubGlobal('fetch', outputApi([{ at: 0, bytes: [], status: 'SUCCEEDED', total: 0 }]).fetch);
    renderScreen(<OutputTail jobId={7} attempts={[attempt(1, 'SUCCEEDED')]} />);
    expect(await screen.findByText('This attempt wrote nothing.')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Download' })).toBeDisabled();
    // Nothing more will be written: no Follow toggle on a finished attempt (review §5.14).
    expect(screen.queryByRole('switch', { name: 'Follow' })).toBeNull();
    expect(screen.queryByLabelText('Follow')).toBeNull();
  });

  it('offers Follow while the attempt runs, and drops it once it has finished', async () => {
    const api = outputApi([
      { at: 0, bytes: utf8('one\n'), status: 'RUNNING', total: 4 },
      { at: 4, bytes: utf8('two\n'), status: 'SUCCEEDED', total: 8 },
    ]);
    vi.stubGlobal('fetch', api.fetch);
    renderScreen(<OutputTail jobId={7} attempts={[attempt(1, 'RUNNING')]} />);
    expect(await screen.findByLabelText('Follow')).toBeChecked();
    const view = screen.getByLabelText('Output of attempt 1');
    expect(view).toHaveAttribute('tabindex', '0');
    await waitFor(() => expect(view.textContent).toBe('one\ntwo\n'), { timeout: 4000 });
    await waitFor(() => expect(screen.queryByLabelText('Follow')).toBeNull());
  });
});
