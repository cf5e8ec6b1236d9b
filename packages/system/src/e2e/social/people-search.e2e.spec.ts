import { api, ErrorBodySchema } from '@castie/contracts';
import { newUser, TestSystem, type TestUser } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

const eventually = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 5000, interval: 10 });
const search = async (user: TestUser, query: string) => {
  const res = await sys.get(`/api/search/people/${query}`, user);
  expect(res.status, res.text).toBe(200);
  return api.social.searchPeople.response.parse(res.body);
};

let seq = 0;
/** A word no other test's names contain, so each test searches its own people. */
const uniqueWord = () => `Zq${Date.now().toString(36)}x${++seq}`;
const person = (firstName: string, lastName: string, name = 'p') => sys.signUp({ ...newUser(name), firstName, lastName });

describe('people search', () => {
  it('matches handle, first and last name, any case, anywhere in them; ordered by last name', async () => {
    const w = uniqueWord();
    const me = await person('Me', `${w}Mmm`);
    const c = await person('Carla', `${w}Cole`);
    const a = await person(`${w}Anna`, 'Aaron');
    const b = await sys.signUp({ ...newUser(`${w}b`), firstName: 'Bert', lastName: 'Bright' });
    // Last names: Aaron, Bright, <w>Cole, <w>Mmm. The others' sign-ups show eventually (a
    // user's next requests wait for their own writes only).
    await eventually(async () => expect(await search(me, `?q=${w.toUpperCase()}`)).toEqual({
      status: 200,
      search_results: [
        { first_name: `${w}Anna`, last_name: 'Aaron', friend_status: 'not-friends', handle: a.handle },
        { first_name: 'Bert', last_name: 'Bright', friend_status: 'not-friends', handle: b.handle },
        { first_name: 'Carla', last_name: `${w}Cole`, friend_status: 'not-friends', handle: c.handle },
        { first_name: 'Me', last_name: `${w}Mmm`, friend_status: 'self', handle: me.handle },
      ],
      has_more: false,
      next_before: null,
    }));
    // Every word must match one of the three fields.
    expect((await search(me, `?q=${w}+carla`)).search_results.map((r) => r.handle)).toEqual([c.handle]);
    expect((await search(me, `?q=${w.toLowerCase()}%20bright`)).search_results.map((r) => r.handle)).toEqual([b.handle]);
    expect((await search(me, `?q=${w}+nobody`)).search_results).toEqual([]);
  });

  it('shows each entry as the searcher relates to it (listing style: friends, pending, respond)', async () => {
    const w = uniqueWord();
    const me = await person('Me', `${w}E`);
    const friend = await person('Friend', `${w}A`);
    const asked = await person('Asked', `${w}B`);
    const asker = await person('Asker', `${w}C`);
    const stranger = await person('Stranger', `${w}D`);
    await sys.post(`/api/add-frodad/${friend.handle}/`, {}, me);
    expect((await sys.post(`/api/frodad-requests/${me.handle}/accept/`, {}, friend)).status).toBe(200);
    await sys.post(`/api/add-frodad/${asked.handle}/`, {}, me);
    await sys.post(`/api/add-frodad/${me.handle}/`, {}, asker);
    await eventually(async () =>
      expect((await search(me, `?q=${w}`)).search_results.map((r) => [r.handle, r.friend_status])).toEqual([
        [friend.handle, 'friends'],
        [asked.handle, 'pending'],
        [asker.handle, 'respond'],
        [stranger.handle, 'not-friends'],
        [me.handle, 'self'],
      ]),
    );
  });

  it('finds private profiles too, and never deleted ones', async () => {
    const w = uniqueWord();
    const me = await person('Me', `${w}Me`);
    const shy = await person('Shy', `${w}Private`);
    const gone = await person('Gone', `${w}Deleted`);
    expect((await sys.post('/api/preferences/', { is_private: 'True' }, shy)).status).toBe(200);
    await eventually(async () => expect((await search(me, `?q=${w}`)).search_results.map((r) => r.handle)).toEqual([gone.handle, me.handle, shy.handle]));
    expect((await sys.post(`/api/profile/${gone.handle}/delete/`, {}, gone)).status).toBe(200);
    await eventually(async () => expect((await search(me, `?q=${w}`)).search_results.map((r) => r.handle)).toEqual([me.handle, shy.handle]));
  });

  it('an empty q finds nobody; a missing q is named as missing', async () => {
    const me = await person('Me', 'Empty');
    for (const query of ['?q=', '?q=%20%20']) expect(await search(me, query)).toEqual({ status: 200, search_results: [], has_more: false, next_before: null });
    const missing = await sys.get('/api/search/people/', me);
    expect(missing.body).toEqual({ status: 400, error_type: 'missing_request_data', error_message: 'q is required' });
  });

  it('treats q as text, not as a pattern', async () => {
    const me = await person('Me', 'Pattern');
    expect((await search(me, `?q=${encodeURIComponent('.*')}`)).search_results).toEqual([]);
    expect((await search(me, `?q=${encodeURIComponent('(')}`)).search_results).toEqual([]);
  });
});

describe('people search pages (decisions.md: lists have bounded size)', () => {
  it('returns at most limit entries, says more exist, and goes on after next_before without gaps or repeats', async () => {
    const w = uniqueWord();
    // Two people share a last name: the order goes on by handle.
    const people = [await person('A', `${w}Same`, 'aaa'), await person('B', `${w}Same`, 'bbb'), await person('C', `${w}Other`), await person('D', `${w}Zed`), await person('E', `${w}Alpha`)];
    const me = people[0]!;
    // The others' sign-ups show eventually.
    await eventually(async () => expect((await search(me, `?q=${w}`)).search_results).toHaveLength(5));
    const all = (await search(me, `?q=${w}`)).search_results.map((r) => r.handle);
    const pages: string[][] = [];
    let before: string | null = null;
    do {
      const page = await search(me, `?q=${w}&limit=2${before ? `&before=${encodeURIComponent(before)}` : ''}`);
      pages.push(page.search_results.map((r) => r.handle));
      expect(page.has_more).toBe(page.next_before !== null);
      before = page.next_before;
    } while (before);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(all);
  });

  it('gives 100 entries when no limit is asked', async () => {
    const w = uniqueWord();
    const people: TestUser[] = [];
    for (let i = 0; i < 101; i++) people.push(await person('Many', `${w}N${String(i).padStart(3, '0')}`));
    // The others' sign-ups show eventually: the 101st too, once has_more says so.
    await eventually(async () => {
      const page = await search(people[0]!, `?q=${w}`);
      expect(page.search_results).toHaveLength(100);
      expect(page.has_more).toBe(true);
      expect(page.search_results.at(-1)!.last_name).toBe(`${w}N099`);
    });
  });

  it('refuses a limit over 500 or under 1, and a made-up cursor', async () => {
    const me = await person('Me', 'Limits');
    for (const query of ['?q=a&limit=501', '?q=a&limit=0', '?q=a&limit=lots', '?q=a&before=notacursor']) {
      const res = await sys.get(`/api/search/people/${query}`, me);
      expect(res.status, query).toBe(400);
      expect(ErrorBodySchema.parse(res.body).error_type).toBe('missing_request_data');
    }
    expect((await search(me, '?q=a&limit=500')).status).toBe(200);
  });
});
