import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';

export const channelsQueryOptions = () =>
  queryOptions({
    queryKey: ['notification-channels'],
    queryFn: () => unwrap(api.GET('/api/v1/notification-channels')),
  });

/** GET /notification-channels: the channels of the caller's projects (ADMIN). */
export const useChannels = () => useQuery(channelsQueryOptions());
