import { MantineProvider } from '@mantine/core';
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { errorHeadline, FailureText } from './FailureText';

const TRACE = 'HandlerFailed: upstream said no\nTraceback (most recent call last):\n  File "worker.py", line 412, in _run\n';

describe('FailureText', () => {
  it('shows the one-line error first and the traceback collapsed', () => {
    render(
      <MantineProvider env="test">
        <FailureText error={TRACE} />
      </MantineProvider>,
    );
    expect(screen.getByText('HandlerFailed: upstream said no')).toBeVisible();
    const details = screen.getByText('Traceback').closest('details');
    expect(details).not.toBeNull();
    expect(details?.open).toBe(false);
    expect(details?.textContent).toContain('File "worker.py", line 412');
  });

  it('shows only the headline when the full text is elsewhere on the page', () => {
    render(
      <MantineProvider env="test">
        <FailureText error={TRACE} headlineOnly />
      </MantineProvider>,
    );
    expect(screen.queryByText('Traceback')).toBeNull();
  });

  it('takes the first non-empty line as the headline', () => {
    expect(errorHeadline('\n  boom: disk full\nmore')).toBe('boom: disk full');
    expect(errorHeadline('single')).toBe('single');
  });
});
