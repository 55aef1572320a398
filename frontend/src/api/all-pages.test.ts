import { describe, expect, it } from 'vitest';
import { fakeApi, http } from '../test/render';
import { allPages, MAX_PAGE } from './all-pages';
import { createApiClient, unwrap } from './client';

const project = (slug: string) => ({
  slug, name: slug, archived: false, role: 'ADMIN' as const, quotas: {},
  usage: { schedules: 0, pending_jobs: 0, enqueued_last_minute: 0 },
});

describe('allPages', () => {
  it('follows next_cursor until the last page, so the project switcher sees every project', async () => {
    const fake = fakeApi(
      http.get('/api/v1/projects', ({ request, response }) =>
        new URL(request.url).searchParams.get('cursor') === 'after-b'
          ? response(200).json({ items: [project('c')], next_cursor: null })
          : response(200).json({ items: [project('a'), project('b')], next_cursor: 'after-b' })),
    );
    const api = createApiClient(fake.fetch);
    const all = await allPages((cursor) =>
      unwrap(api.GET('/api/v1/projects', { params: { query: { limit: MAX_PAGE, cursor } } })));
    expect(all.map((p) => p.slug)).toEqual(['a', 'b', 'c']);
    const asked = fake.calls.map((c) => new URL(c.url).searchParams);
    expect(asked.map((q) => [q.get('limit'), q.get('cursor')])).toEqual([['200', null], ['200', 'after-b']]);
  });
});
