import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { meQueryKey } from '../api/queries/get-me';
import { SessionProvider } from '../lib/session';
import { aMe, anIdentity, someStats } from '../test/factories';
import { fakeApi, http } from '../test/render';
import { FIRST_DATA_ID, seedFirstData, takeFirstData, type FirstData } from './first-data';
import { routes } from './routes';

const me = aMe(anIdentity({ id: 7, username: 'ada', role: 'ADMIN' }));
const stats = someStats({ jobs_by_status: { PENDING: 1, RUNNING: 0, SUCCEEDED: 120, DEAD: 2, CANCELLED: 0 } });

/** index.html as `cronplane serve` sends it to a signed-in navigation (backend api/spa.py). */
function putBlock(text: string) {
  const block = document.createElement('script');
  block.type = 'application/json';
  block.id = FIRST_DATA_ID;
  block.textContent = text;
  document.body.append(block);
}

const statsKey = ['stats'];

describe('the first answers index.html carries', () => {
  beforeEach(() => localStorage.clear());
  afterEach(() => {
    vi.unstubAllGlobals();
    document.getElementById(FIRST_DATA_ID)?.remove();
  });

  it('are read once and taken out of the document', () => {
    // As the server escapes them: < > & as \u escapes, which JSON.parse turns back.
    putBlock(JSON.stringify({ me: { ...me, username: 'NAME' }, stats: { project: null, body: stats } }).replace('NAME', '\\u003c/script\\u003e'));
    const data = takeFirstData();
    expect(data?.me.username).toBe('</script>');
    expect(data?.stats?.body.jobs_by_status.SUCCEEDED).toBe(120);
    expect(document.getElementById(FIRST_DATA_ID), 'removed, so nothing reads it after the first frame').toBeNull();
    expect(takeFirstData(), 'a second read asks the API').toBeNull();
  });

  it('without a block, or with one that does not parse, there is nothing to seed', () => {
    expect(takeFirstData()).toBeNull();
    putBlock('{"me": ');
    expect(takeFirstData()).toBeNull();
    expect(document.getElementById(FIRST_DATA_ID)).toBeNull();
    putBlock(JSON.stringify({ me: { username: 'no id' } }));
    expect(takeFirstData()).toBeNull();
  });

  it('seed who is signed in everywhere, and the numbers only on the dashboard of the project they were counted for', () => {
    const first: FirstData = { me, stats: { project: null, body: stats } };
    const seeded = (pathname: string, search = '', data = first) => {
      const client = new QueryClient();
      seedFirstData(client, data, { pathname, search });
      return { me: client.getQueryData(meQueryKey), stats: client.getQueryData(statsKey) };
    };
    expect(seeded('/')).toEqual({ me, stats });
    expect(seeded('/jobs')).toEqual({ me, stats: undefined });
    expect(seeded('/', '?project=team-a').stats, 'counted for every project, shown for team-a').toBeUndefined();
    expect(seeded('/', '?project=team-a', { me, stats: { project: 'team-a', body: stats } }).stats).toEqual(stats);
    localStorage.setItem('cronplane.project.7', 'team-b');
    expect(seeded('/').stats, 'the server cannot see the project remembered on this browser').toBeUndefined();
    expect(seeded('/', '', { me, stats: { project: 'team-b', body: stats } }).stats).toEqual(stats);
  });

  it('the dashboard shows them without asking GET /auth/me or GET /stats first', async () => {
    const later = someStats({ jobs_by_status: { ...stats.jobs_by_status, SUCCEEDED: 999 } });
    const fake = fakeApi(
      http.get('/api/v1/auth/me', ({ response }) => response(200).json(me)),
      http.get('/api/v1/stats', ({ response }) => response(200).json(later)),
    );
    vi.stubGlobal('fetch', fake.fetch);
    putBlock(JSON.stringify({ me, stats: { project: null, body: stats } }));
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    seedFirstData(client, takeFirstData() as FirstData, { pathname: '/', search: '' });
    render(
      <MantineProvider env="test">
        <QueryClientProvider client={client}>
          <SessionProvider>
            <RouterProvider router={createMemoryRouter(routes, { initialEntries: ['/'] })} />
          </SessionProvider>
        </QueryClientProvider>
      </MantineProvider>,
    );
    expect(await screen.findByLabelText('SUCCEEDED jobs')).toHaveTextContent('120');
    const asked = fake.calls.map((r) => new URL(r.url).pathname);
    expect(asked, 'the first frame needed neither request').not.toContain('/api/v1/auth/me');
    expect(asked).not.toContain('/api/v1/stats');
  });
});
