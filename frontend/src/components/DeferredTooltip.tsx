import type { TooltipProps } from '@mantine/core';
import { useLayoutEffect, useRef, type ComponentType } from 'react';
import { deferredComponent } from '../lib/deferred-component';
import { withLaterStyles } from './with-later-styles';

const tooltip = deferredComponent<TooltipProps>(async () => (await withLaterStyles(() => import('./deferred-tooltip-module'))()).Tooltip as ComponentType<TooltipProps>);

const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])';

/**
 * Mantine's Tooltip once its code is in; until then the child alone (with its own accessible
 * name or `title`, so nothing is lost but the styled bubble). Tooltip and floating-ui stay out of
 * the first download, which on slow 4G is what the dashboard waits for (bench/RESULTS.md, issue
 * 23); the code is requested after the first render that shows one, so it is usually in before
 * anyone hovers. Wrapping the child remounts it: if it had the focus, it gets it back.
 */
export function DeferredTooltip(props: TooltipProps) {
  const Tooltip = tooltip.useComponent();
  const box = useRef<HTMLSpanElement>(null);
  const swap = useRef<'before' | 'refocus' | 'done'>(Tooltip ? 'done' : 'before');
  // The render that wraps the child runs while the plain child is still in the document: note
  // whether it holds the focus, to give it back to the new one once it is committed.
  if (Tooltip && swap.current === 'before') swap.current = box.current?.contains(document.activeElement) ? 'refocus' : 'done';
  useLayoutEffect(() => {
    if (swap.current !== 'refocus') return;
    swap.current = 'done';
    box.current?.querySelector<HTMLElement>(FOCUSABLE)?.focus();
  }, [Tooltip]);
  // display: contents: the wrapper draws no box, so the layout is the child's alone, before and after.
  return (
    <span ref={box} style={{ display: 'contents' }}>
      {Tooltip ? <Tooltip {...props} /> : props.children}
    </span>
  );
}
