import { act, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { usePolling } from './polling';

function setVisibility(state: 'visible' | 'hidden') {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
  document.dispatchEvent(new Event('visibilitychange'));
}

describe('usePolling', () => {
  beforeEach(() => {
    localStorage.clear();
    setVisibility('visible');
  });
  afterEach(() => setVisibility('visible'));

  it('polls at the chosen interval and stops on Pause', () => {
    const { result } = renderHook(() => usePolling(5000));
    expect(result.current.refetchInterval).toBe(5000);
    act(() => result.current.setChoice(1000));
    expect(result.current.refetchInterval).toBe(1000);
    act(() => result.current.setChoice(0));
    expect(result.current.refetchInterval).toBe(false);
    expect(result.current.paused).toBe(true);
  });

  it('pauses while the tab is hidden and resumes when it is shown again', () => {
    const { result } = renderHook(() => usePolling(2000));
    act(() => setVisibility('hidden'));
    expect(result.current.refetchInterval).toBe(false);
    expect(result.current.visible).toBe(false);
    expect(result.current.choice, 'the user choice is kept').toBe(2000);
    act(() => setVisibility('visible'));
    expect(result.current.refetchInterval).toBe(2000);
  });

  it('remembers the choice across pages', () => {
    const first = renderHook(() => usePolling(5000));
    act(() => first.result.current.setChoice(10000));
    first.unmount();
    const second = renderHook(() => usePolling(5000));
    expect(second.result.current.choice).toBe(10000);
  });
});
