import { describe, expect, it } from 'vitest';
import { scopeRequest } from './project-scope';

const at = (path: string, init?: RequestInit) => new Request(`http://localhost${path}`, init);
const post = (path: string, body: unknown) => at(path, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });

describe('the project scope of API requests', () => {
  it('adds the chosen project to every list the API scopes', async () => {
    for (const path of ['/api/v1/jobs', '/api/v1/jobs/count', '/api/v1/schedules', '/api/v1/audit', '/api/v1/stats', '/api/v1/queues']) {
      const scoped = await scopeRequest(at(`${path}?limit=5`), 'team-a');
      expect(new URL(scoped.url).searchParams.getAll('project'), path).toEqual(['team-a']);
      expect(new URL(scoped.url).searchParams.get('limit')).toBe('5');
    }
  });

  it('leaves one object, other endpoints, an explicit project and "all projects" alone', async () => {
    expect((await scopeRequest(at('/api/v1/jobs/12'), 'team-a')).url).toBe('http://localhost/api/v1/jobs/12');
    expect((await scopeRequest(at('/api/v1/projects'), 'team-a')).url).toBe('http://localhost/api/v1/projects');
    expect(new URL((await scopeRequest(at('/api/v1/jobs?project=b'), 'team-a')).url).searchParams.getAll('project')).toEqual(['b']);
    expect((await scopeRequest(at('/api/v1/jobs'), null)).url).toBe('http://localhost/api/v1/jobs');
  });

  it('narrows a bulk action over a filter to the chosen project, not one over ids', async () => {
    const filtered = await scopeRequest(post('/api/v1/jobs/bulk/cancel', { filter: { status: ['DEAD'] }, reason: 'x' }), 'team-a');
    expect(await filtered.json()).toEqual({ filter: { status: ['DEAD'], project: ['team-a'] }, reason: 'x' });
    const ids = await scopeRequest(post('/api/v1/jobs/bulk/retry', { ids: [1, 2], reason: 'x' }), 'team-a');
    expect(await ids.json()).toEqual({ ids: [1, 2], reason: 'x' });
  });

  it('creates jobs and schedules in the chosen project unless the body names one', async () => {
    const job = await scopeRequest(post('/api/v1/jobs', { handler: 'noop' }), 'team-a');
    expect(await job.json()).toEqual({ handler: 'noop', project: 'team-a' });
    const named = await scopeRequest(post('/api/v1/schedules', { name: 's', project: 'other' }), 'team-a');
    expect(await named.json()).toEqual({ name: 's', project: 'other' });
  });
});
