import { eventually, TestSystem, type TestUser } from '../../testing/harness.ts';
import { badPagingQueries, pageQuery, walkPages } from '../../testing/paging.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
let viewer: TestUser;
let fan: TestUser;
let groupCount = 0;

async function newGroup(name: string): Promise<string> {
  const slug = `g${++groupCount}x${name.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
  expect((await sys.admin('POST', '/admin/groups/', { slug, groupName: name, groupInfoText: '', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  return slug;
}
// The lists are read by viewer, whose reads wait for viewer's own writes only: each helper ends
// with a read by the writer from the groups service, which serves the lists, so that it holds the
// write and viewer sees it too. (Not GET /api/groups/{slug}/: the casties service answers it, and
// waiting there left the groups service free to lag, so a whole list read next could miss the
// newest item that the pages read after it had.)
async function follow(slug: string, user: TestUser): Promise<void> {
  await eventually(async () => expect((await sys.post(`/api/groups/${slug}/follow/`, {}, user)).status).toBe(200));
  expect((await sys.get(`/api/profile/${user.handle}/groups/?slugs_only=true`, user)).body.myGroups).toContain(slug);
}
async function befriend(a: TestUser, b: TestUser): Promise<void> {
  expect((await sys.post(`/api/add-frodad/${b.handle}/`, {}, a)).status).toBe(200);
  await eventually(async () => expect((await sys.post(`/api/frodad-requests/${a.handle}/accept/`, {}, b)).status).toBe(200));
  expect((await sys.get('/api/groups/', b)).status).toBe(200);
}
/** Walked ids: the list as it was first, in order, then only items added since (no duplicates). */
function expectStable(walked: string[], before: string[]): void {
  expect(new Set(walked).size).toBe(walked.length);
  expect(walked.filter((id) => before.includes(id))).toEqual(before);
}

beforeAll(async () => {
  sys = await TestSystem.start();
  [viewer, fan] = [await sys.signUp(), await sys.signUp()];
  await newGroup('Crowd');
  // Twelve followers of crowd (pairs at the same instant: the id breaks the tie), seven of them viewer's frodads.
  for (let i = 0; i < 12; i++) {
    if (i % 2 === 0) sys.clock.advance(1);
    const u = await sys.signUp();
    await follow('g1xcrowd', u);
    if (i < 7) await befriend(viewer, u);
  }
  // Twelve more groups, all followed by fan.
  for (let i = 0; i < 12; i++) {
    if (i % 2 === 0) sys.clock.advance(1);
    await follow(await newGroup(`Topic ${String(i).padStart(2, '0')}`), fan);
  }
}, 120_000);
afterAll(() => sys.close());

const keysOf = (field: string) => (b: Record<string, unknown>) => (Array.isArray(b[field]) ? (b[field] as string[]) : Object.keys(b[field] as object));

describe.each([
  {
    list: 'followers',
    path: () => '/api/groups/g1xcrowd/followers/',
    between: async () => {
      sys.clock.advance(1);
      await follow('g1xcrowd', await sys.signUp());
    },
  },
  {
    list: 'friendFollowers',
    path: () => '/api/groups/g1xcrowd/followers/frodads/',
    between: async () => {
      sys.clock.advance(1);
      const u = await sys.signUp();
      await follow('g1xcrowd', u);
      await befriend(viewer, u);
    },
  },
  {
    list: 'groups',
    path: () => '/api/groups/',
    // New groups sort before and after the cursor: neither shifts a later page.
    between: async (i: number) => {
      await newGroup(i % 2 === 0 ? `Aardvark ${i}` : `Zebra ${i}`);
    },
  },
  {
    list: 'myGroups',
    path: () => `/api/profile/${fan.handle}/groups/`,
    between: async (i: number) => {
      sys.clock.advance(1);
      await follow(await newGroup(`Later ${i}`), fan);
    },
  },
])('paging $list', ({ list, path, between }) => {
  it('without paging parameters answers the whole list, with no paging fields', async () => {
    const whole = await sys.get(path(), viewer);
    expect(whole.status).toBe(200);
    expect(Object.keys(whole.body[list] as object).length).toBeGreaterThanOrEqual(list === 'friendFollowers' ? 7 : 12);
    expect(whole.body).not.toHaveProperty('has_more');
    expect(whole.body).not.toHaveProperty('next_before');
  });

  it('walks every item once while items are added between pages', async () => {
    const before = keysOf(list)((await sys.get(path(), viewer)).body);
    const walked = await walkPages((cursor) => sys.get(`${path()}${pageQuery(3, cursor)}`, viewer), keysOf(list), between);
    expect(walked.pages.length).toBeGreaterThan(2);
    expect(walked.pages.slice(0, -1).every((p) => p.ids.length === 3)).toBe(true);
    if (list === 'myGroups') {
      // Pages follow the follow order (oldest first); the whole list is alphabetical.
      expect(new Set(walked.ids).size).toBe(walked.ids.length);
      expect(before.every((id) => walked.ids.includes(id))).toBe(true);
    } else expectStable(walked.ids, before);
    // Everything present now appears once when walking again (nothing added meanwhile).
    const now = keysOf(list)((await sys.get(path(), viewer)).body);
    const again = await walkPages((cursor) => sys.get(`${path()}${pageQuery(4, cursor)}`, viewer), keysOf(list));
    expect([...again.ids].sort()).toEqual([...now].sort());
  });

  it('refuses a limit out of 1..100 and a malformed cursor with 400', async () => {
    for (const q of badPagingQueries) {
      if (list === 'groups' && q === '?before=not-a-key%7Cnot-an-id') continue; // any name is a key of the groups list
      const res = await sys.get(`${path()}${q}`, viewer);
      expect(res.status, q).toBe(400);
      expect(res.body).toMatchObject({ status: 400, error_type: 'missing_request_data' });
    }
  });
});

describe('paged myGroups with slugs_only', () => {
  it('pages the slugs the same way', async () => {
    const walked = await walkPages((cursor) => sys.get(`/api/profile/${fan.handle}/groups/${pageQuery(5, cursor, '&slugs_only=true')}`, viewer), keysOf('myGroups'));
    const whole = (await sys.get(`/api/profile/${fan.handle}/groups/?slugs_only=true`, viewer)).body.myGroups as string[];
    expect([...walked.ids].sort()).toEqual([...whole].sort());
  });
});
