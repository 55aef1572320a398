import './mantine.css';
import './console.css';
import { createTheme, localStorageColorSchemeManager, MantineProvider, type CSSVariablesResolver } from '@mantine/core';
import { MutationCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { retryDelay, shouldRetry } from '../api/retry-policy';
import { SessionProvider } from '../lib/session';
import { announceSuccess } from '../lib/toasts';
import { Toaster } from '../components/Toaster';
import { accessibleColors } from './palette';

const theme = createTheme({
  primaryColor: 'blue',
  // System fonts only: the console runs offline and under a strict CSP.
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  fontFamilyMonospace: 'ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace',
  focusRing: 'always',
  // Mantine's default shade 6 (white on #228be6 is 3.55:1) fails WCAG AA; shade 8 passes (5:1).
  primaryShade: { light: 8, dark: 8 },
  colors: accessibleColors,
  components: {
    // Mantine's close button is an icon without a name (axe: button-name, critical) in every
    // dialog. A plain object, not Modal.extend: importing Modal here would pull it into the entry.
    Modal: { defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } },
  },
});

// Dimmed text: Mantine's gray-6 (3.3:1 on white) and dark-2 (3.5:1 on dark cards) fail AA.
// Disabled controls in dark: dark-3 text on dark-6 (2.3:1) all but vanished; dark-2 gives 3.5:1.
// A field's error text: Mantine's red-6 on white is 3.3:1 and red-8 on dark 3.1:1; the accessible
// red-8 (palette.ts) and red-4 (4.8:1 even on dark-5) pass.
const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: { '--mantine-color-dimmed': 'var(--mantine-color-gray-7)', '--mantine-color-error': 'var(--mantine-color-red-8)' },
  dark: {
    '--mantine-color-dimmed': 'var(--mantine-color-dark-1)',
    '--mantine-color-error': 'var(--mantine-color-red-4)',
    '--mantine-color-disabled-color': 'var(--mantine-color-dark-2)',
  },
});

const colorSchemeManager = localStorageColorSchemeManager({ key: 'cronplane.colorScheme' });

export function createQueryClient() {
  return new QueryClient({
    // Every mutation that declares `meta.success` confirms itself with a toast.
    mutationCache: new MutationCache({ onSuccess: (data, variables, _context, mutation) => announceSuccess(mutation.meta, data, variables) }),
    defaultOptions: {
      queries: {
        retry: shouldRetry,
        retryDelay,
        refetchOnWindowFocus: true,
      },
    },
  });
}

export function Providers({ client: given, children }: { client?: QueryClient; children: ReactNode }) {
  const [client] = useState(() => given ?? createQueryClient());
  return (
    <MantineProvider theme={theme} defaultColorScheme="auto" colorSchemeManager={colorSchemeManager} cssVariablesResolver={cssVariablesResolver}>
      <QueryClientProvider client={client}>
        <SessionProvider>{children}</SessionProvider>
        <Toaster />
      </QueryClientProvider>
    </MantineProvider>
  );
}
