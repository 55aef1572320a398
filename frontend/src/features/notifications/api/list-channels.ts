import { queryOptions, useQuery } from '@tanstack/react-query';
import { allPages, MAX_PAGE } from '../../../api/all-pages';
import { api, unwrap } from '../../../api/client';

export const channelsQueryOptions = () =>
  queryOptions({
    queryKey: ['notification-channels'],
    // Every page: the whole list, in the shape of one page.
    queryFn: async () => ({
      items: await allPages((cursor) =>
        unwrap(api.GET('/api/v1/notification-channels', { params: { query: { limit: MAX_PAGE, cursor } } })),
      ),
      next_cursor: null,
    }),
  });

/** GET /notification-channels: the channels of the caller's projects with their health; url, address, has_secret
 * and the last error only where the caller is the project's ADMIN. */
export const useChannels = () => useQuery(channelsQueryOptions());
