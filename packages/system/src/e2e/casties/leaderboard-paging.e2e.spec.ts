import { eventually, TestSystem, newUser, type TestUser } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
let viewer: TestUser;
beforeAll(async () => {
  sys = await TestSystem.start();
  viewer = await sys.signUp();
  for (let i = 0; i < 11; i++) await sys.signUp();
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'board', groupName: 'Board', groupInfoText: '', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  // Other people's sign-ups reach the viewer's board once the casties service applied them
  // (rule 6: eventually): the pages below start from all twelve.
  await eventually(async () => expect(handles((await sys.get('/api/leaderboard/', viewer)).body)).toHaveLength(12));
}, 60_000);
afterAll(() => sys.close());

const handles = (b: Record<string, unknown>) => (b.leaderboard_profiles as { handle: string }[]).map((p) => p.handle);

describe('paging the overall leaderboard with offset', () => {
  it('without offset answers as before: the first limit entries, no paging fields', async () => {
    const whole = await sys.get('/api/leaderboard/', viewer);
    expect(handles(whole.body)).toHaveLength(12);
    expect(whole.body).not.toHaveProperty('has_more');
    expect(whole.body).not.toHaveProperty('next_offset');
    expect(handles((await sys.get('/api/leaderboard/?limit=5', viewer)).body)).toHaveLength(5);
  });

  it('walks every entry once in rank order; people joining at the end do not shift earlier pages', async () => {
    const before = handles((await sys.get('/api/leaderboard/', viewer)).body);
    const seen: string[] = [];
    let offset: number | null = 0;
    let pages = 0;
    while (offset !== null && pages < 20) {
      const res = await sys.get(`/api/leaderboard/?limit=5&offset=${offset}`, viewer);
      expect(res.status).toBe(200);
      seen.push(...handles(res.body));
      offset = res.body.has_more ? (res.body.next_offset as number) : null;
      if (offset !== null) expect(res.body.has_more).toBe(true);
      else expect(res.body.next_offset).toBeNull();
      pages++;
      // Nobody has XP yet: a new person with a late handle ranks last.
      await sys.signUp(newUser(`zzzz${pages}`));
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.slice(0, before.length)).toEqual(before);
  });

  it('pages a group board the same way: every follower once, in rank order', async () => {
    const followers: TestUser[] = [];
    for (let i = 0; i < 7; i++) {
      const u = await sys.signUp();
      expect((await sys.post('/api/groups/board/follow/', {}, u)).status).toBe(200);
      followers.push(u);
    }
    // The followers' writes reach the viewer's answers once the casties service applied them.
    const whole = await eventually(async () => {
      const res = await sys.get('/api/leaderboard/board/', viewer);
      expect([...handles(res.body)].sort()).toEqual(followers.map((f) => f.handle).sort());
      return res;
    });
    expect(whole.body).not.toHaveProperty('has_more');
    const seen: string[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const res = await sys.get(`/api/leaderboard/board/?limit=3&offset=${offset}`, viewer);
      expect(res.status).toBe(200);
      seen.push(...handles(res.body));
      offset = res.body.has_more ? (res.body.next_offset as number) : null;
    }
    expect(seen).toEqual(handles(whole.body));
    expect([...seen].sort()).toEqual(followers.map((f) => f.handle).sort());
  });

  it('refuses a negative or non-numeric offset with 400', async () => {
    for (const url of ['/api/leaderboard/?offset=-1', '/api/leaderboard/?offset=two', '/api/leaderboard/?limit=0&offset=0', '/api/leaderboard/board/?offset=-5']) {
      const res = await sys.get(url, viewer);
      expect(res.status, url).toBe(400);
      expect(res.body).toMatchObject({ status: 400, error_type: 'missing_request_data' });
    }
  });
});
