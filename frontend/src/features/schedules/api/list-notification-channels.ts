import { useQuery } from '@tanstack/react-query';
import { allPages, MAX_PAGE } from '../../../api/all-pages';
import { api, unwrap } from '../../../api/client';

/** The channel names a schedule's notify may name (ADMIN: the form is for ADMINs). */
export const useNotificationChannelNames = (): string[] => {
  const query = useQuery({
    queryKey: ['notification-channels'],
    // Every page: the whole list, in the shape of one page.
    queryFn: async () => ({
      items: await allPages((cursor) =>
        unwrap(api.GET('/api/v1/notification-channels', { params: { query: { limit: MAX_PAGE, cursor } } })),
      ),
      next_cursor: null,
    }),
  });
  return Array.from(new Set((query.data?.items ?? []).map((c) => c.name))).sort();
};
