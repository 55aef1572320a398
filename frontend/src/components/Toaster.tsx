import { Notification, Stack } from '@mantine/core';
import { dismissToast, useToasts } from '../lib/toasts';

/** The success confirmations, bottom right, in a polite live region (read out, never stealing focus). */
export function Toaster() {
  const toasts = useToasts();
  return (
    <Stack className="cp-toaster" gap="xs" role="status" aria-live="polite" aria-label="Notifications">
      {toasts.map((t) => (
        <Notification key={t.id} color="green" withBorder onClose={() => dismissToast(t.id)} closeButtonProps={{ 'aria-label': 'Dismiss' }}>
          {t.message}
        </Notification>
      ))}
    </Stack>
  );
}
