import { startTransition, useEffect, useState } from 'react';

/**
 * False on the component's first render, true once the browser has painted it. What a page shows
 * second (panels below its first numbers) renders then, in a transition, so the first frame on a
 * slow phone carries only what its reader waits for (bench/RESULTS.md, issue 45). A task queued
 * from requestAnimationFrame runs after that frame's paint; a hidden tab paints no frames, so
 * there a plain task is enough.
 */
export function useAfterFirstPaint(): boolean {
  const [painted, setPainted] = useState(false);
  useEffect(() => {
    const done = () => startTransition(() => setPainted(true));
    let timer: ReturnType<typeof setTimeout> | undefined;
    let frame: number | undefined;
    if (typeof requestAnimationFrame === 'function' && document.visibilityState !== 'hidden') {
      frame = requestAnimationFrame(() => {
        timer = setTimeout(done);
      });
    } else {
      timer = setTimeout(done);
    }
    return () => {
      if (frame !== undefined) cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, []);
  return painted;
}
