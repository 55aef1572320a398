import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

/** GET /notification-channels/{id}/deliveries: every attempt, newest first; refetched while open
 * so a test send's answer (and its retries) appear without a reload. */
export const useDeliveries = (id: number | null, refetchInterval: number | false = 2000) =>
  useQuery({
    queryKey: ['notification-channels', 'deliveries', id],
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/notification-channels/{channel_id}/deliveries', {
          params: { path: { channel_id: id ?? 0 }, query: { limit: 100 } },
        }),
      ),
    enabled: id !== null,
    refetchInterval,
  });
