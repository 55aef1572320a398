import { MantineProvider } from '@mantine/core';
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Attempt } from '../../api/types';
import { AttemptTimeline, attemptCountText } from './AttemptTimeline';

const attempt = (over: Partial<Attempt>): Attempt =>
  ({
    number: 1,
    status: 'FAILED',
    worker_id: 'h:1:a',
    started_at: '2026-12-01T10:00:00Z',
    heartbeat_at: null,
    lease_expires_at: '2026-12-01T10:00:30Z',
    finished_at: '2026-12-01T10:00:04Z',
    error: null,
    lost_reason: null,
    ...over,
  }) as Attempt;

const attempts = [
  attempt({ number: 1, status: 'LOST', lost_reason: 'released_at_shutdown', error: 'released: worker shut down' }),
  attempt({ number: 2, status: 'LOST', lost_reason: 'lease_expired', started_at: '2026-12-01T10:00:10Z', finished_at: '2026-12-01T10:01:10Z' }),
  attempt({ number: 3, started_at: '2026-12-01T10:01:40Z', finished_at: '2026-12-01T10:01:42Z', error: 'boom\nTraceback' }),
];

describe('AttemptTimeline', () => {
  it('tells a release at shutdown from an expired lease, with run times and backoff gaps', () => {
    render(
      <MantineProvider env="test">
        <AttemptTimeline attempts={attempts} jobError={"boom\nTraceback"} />
      </MantineProvider>,
    );
    expect(screen.getByText(/Released when its worker shut down/)).toBeInTheDocument();
    expect(screen.getByText(/Lost: lease expired/)).toBeInTheDocument();
    expect(screen.getByText(/ran 1 min 0 s/)).toBeInTheDocument();
    expect(screen.getByText('Waited 6 s after attempt 1 (retry backoff)')).toBeInTheDocument();
    expect(screen.getByText('Waited 30 s after attempt 2 (retry backoff)')).toBeInTheDocument();
    // The job's error is shown in full once, on the job; the attempt repeats only its headline.
    expect(screen.queryByText('Traceback')).toBeNull();
  });

  it('colours and shapes each marker by outcome, and shows an error four attempts share once', () => {
    const boom = 'HandlerFailed: ConnectionResetError: [Errno 104] Connection reset by peer\nTraceback (most recent call last):';
    const four = [1, 2, 3, 4].map((n) => attempt({ number: n, error: boom, started_at: `2026-12-01T10:0${n}:00Z`, finished_at: `2026-12-01T10:0${n}:01Z` }));
    const { container } = render(
      <MantineProvider env="test">
        <AttemptTimeline attempts={[...four.slice(0, 3), { ...four[3]!, status: 'SUCCEEDED', error: null }]} jobError={null} />
      </MantineProvider>,
    );
    expect(screen.getAllByText(/^HandlerFailed: ConnectionResetError/)).toHaveLength(1);
    expect(screen.getByTestId('error-repeats')).toHaveTextContent('× 3 attempts (1–3)');
    expect(screen.getAllByText('Same error as attempt 1.')).toHaveLength(2);
    const glyphs = [...container.querySelectorAll('svg[data-glyph]')].map((g) => g.getAttribute('data-glyph'));
    expect(glyphs).toEqual(['cross', 'cross', 'cross', 'check']);
    const outcomes = [...container.querySelectorAll('[data-outcome]')].map((g) => g.getAttribute('data-outcome'));
    expect(outcomes).toEqual(['FAILED', 'FAILED', 'FAILED', 'SUCCEEDED']);
    // Each marker says it in words too: the badge beside it.
    expect(screen.getAllByText('FAILED')).toHaveLength(3);
    expect(screen.getByText('SUCCEEDED')).toBeInTheDocument();
  });

  it('explains a limit raised by releases so the counts add up', () => {
    expect(attemptCountText(3, 4, attempts)).toBe('3 of at most 4 attempts (the limit includes 1 extra for an attempt released at shutdown)');
    expect(attemptCountText(2, 3, [attempt({})])).toBe('2 of at most 3 attempts');
  });

  it('does not count attempts interrupted at shutdown against the limit', () => {
    const cut = [attempt({ number: 1, status: 'INTERRUPTED', error: 'interrupted: worker shut down' }),
      attempt({ number: 2, status: 'SUCCEEDED' })];
    expect(attemptCountText(2, 1, cut)).toBe('1 of at most 1 attempts (and 1 interrupted at shutdown, not counted)');
    render(<MantineProvider env="test"><AttemptTimeline attempts={cut} /></MantineProvider>);
    expect(screen.getByText(/Interrupted: its worker shut down/)).toBeInTheDocument();
  });

  it('says when a running attempt\'s lease expires, or that it expired, never "lease until in …"', () => {
    const soon = new Date(Date.now() + 30_000).toISOString();
    const gone = new Date(Date.now() - 120_000).toISOString();
    const running = (number: number, lease: string) => attempt({ number, status: 'RUNNING', finished_at: null, heartbeat_at: new Date().toISOString(), lease_expires_at: lease });
    const { container } = render(
      <MantineProvider env="test">
        <AttemptTimeline attempts={[running(1, soon)]} />
      </MantineProvider>,
    );
    expect(container).toHaveTextContent(/lease expires in (29|30) seconds/);
    expect(container).not.toHaveTextContent('lease until');
    const { container: late } = render(
      <MantineProvider env="test">
        <AttemptTimeline attempts={[running(1, gone)]} />
      </MantineProvider>,
    );
    expect(late).toHaveTextContent(/lease expired 2 minutes ago/);
  });
});
