import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** The channel names a schedule's notify may name (ADMIN: the form is for ADMINs). */
export const useNotificationChannelNames = (): string[] => {
  const query = useQuery({
    queryKey: ['notification-channels'],
    queryFn: () => unwrap(api.GET('/api/v1/notification-channels')),
  });
  return Array.from(new Set((query.data?.items ?? []).map((c) => c.name))).sort();
};
