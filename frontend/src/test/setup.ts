import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterAll, afterEach, vi } from 'vitest';

afterEach(() => cleanup());

// The files of a worker share one environment and the imports from node_modules (isolate: false in
// vite.config.ts: building a jsdom and importing Mantine per file was two thirds of the CPU). What a
// file could leave behind is put back here, so each file still starts as if it ran alone.
afterAll(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  // The app's own modules (module-level state such as the project scope or the toasts) are
  // evaluated afresh for the next file.
  vi.resetModules();
  if (typeof window === 'undefined') return;
  sessionStorage.clear();
  localStorage.clear();
  for (const cookie of document.cookie.split(';')) {
    const name = cookie.split('=')[0]?.trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  }
  window.history.replaceState(null, '', '/');
  document.body.innerHTML = '';
});

// Pages are lazy chunks (routes.tsx); the first import of one in a test can take over a second on a
// loaded machine, which is not what the find* queries are testing.
configure({ asyncUtilTimeout: 5000 });

// Pure-logic test files run in the node environment; the DOM stubs below are for jsdom only.
if (typeof window !== 'undefined') installDomStubs();

function installDomStubs() {
  // jsdom lacks these; Mantine's components ask for them.
  if (!window.matchMedia) {
    window.matchMedia = (query: string) =>
      ({
        matches: false,
        media: query,
        onchange: null,
        addListener: () => {},
        removeListener: () => {},
        addEventListener: () => {},
        removeEventListener: () => {},
        dispatchEvent: () => false,
      }) as MediaQueryList;
  }
  class ResizeObserverStub {
    observe() {}
    unobserve() {}
    disconnect() {}
  }
  window.ResizeObserver ??= ResizeObserverStub as unknown as typeof ResizeObserver;
  Element.prototype.scrollIntoView ??= () => {};
  if (!('fonts' in document)) {
    Object.defineProperty(document, 'fonts', {
      value: { addEventListener: () => {}, removeEventListener: () => {}, ready: Promise.resolve() },
    });
  }
}
