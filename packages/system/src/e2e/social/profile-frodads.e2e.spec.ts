import { allEndpoints, api, type Endpoint } from '@castie/contracts';
import { newUser, TestSystem, type TestUser } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { z } from 'zod';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

const eventually = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 5000, interval: 10 });
const profile = async (viewer: TestUser, handle: string) => {
  const res = await sys.get(`/api/profile/${handle}/frodads/`, viewer);
  expect(res.status, res.text).toBe(200);
  return api.social.profileFrodads.response.parse(res.body);
};

async function befriend(a: TestUser, b: TestUser) {
  expect((await sys.post(`/api/add-frodad/${b.handle}/`, {}, a)).status).toBe(200);
  expect((await sys.post(`/api/frodad-requests/${a.handle}/accept/`, {}, b)).status).toBe(200);
}

describe('GET /api/profile/{handle}/frodads/', () => {
  it("shows profileInfo and the person's frodads keyed by handle, by last name, each as the viewer relates to them", async () => {
    const ada = await sys.signUp({ ...newUser('ada'), firstName: 'Ada', lastName: 'Lovelace' });
    const zed = await sys.signUp({ ...newUser('zed'), firstName: 'Zed', lastName: 'Zimmer' });
    const bob = await sys.signUp({ ...newUser('bob'), firstName: 'Bob', lastName: 'Babbage' });
    const viewer = await sys.signUp({ ...newUser('viewer'), firstName: 'Vi', lastName: 'Ewer' });
    await befriend(zed, ada);
    await befriend(bob, ada);
    await befriend(viewer, zed);
    await sys.post(`/api/add-frodad/${bob.handle}/`, {}, viewer);

    await eventually(async () => {
      const res = await profile(viewer, ada.handle);
      expect(res.profileInfo).toMatchObject({ handle: ada.handle, firstName: 'Ada', lastName: 'Lovelace', is_private: false, frodadsNumber: 2, friend_status: 'not-friends', level: 1, myCastiesNumber: 0, forecastsNumber: 0, groupsNumber: 0 });
      expect(res.myFrodads).toEqual({
        [bob.handle]: { handle: bob.handle, firstName: 'Bob', lastName: 'Babbage', profPic: '', friend_status: 'pending', level: 1 },
        [zed.handle]: { handle: zed.handle, firstName: 'Zed', lastName: 'Zimmer', profPic: '', friend_status: 'friends', level: 1 },
      });
      // Object keys keep the order: by last name.
      expect(Object.keys(res.myFrodads)).toEqual([bob.handle, zed.handle]);
    });
  });

  it('shows an empty object for someone without frodads', async () => {
    const me = await sys.signUp();
    expect(await profile(me, me.handle)).toMatchObject({ status: 200, myFrodads: {}, profileInfo: { friend_status: 'self', frodadsNumber: 0 } });
  });
});

/** Every profile section the contracts know (GET /api/profile/:handle/<section>/ with profileInfo): those of groups and casties count as they land. */
const profileSections = allEndpoints.filter((e): e is Endpoint => e.method === 'GET' && e.paths.some((p) => /^\/api\/profile\/:handle\/[a-z]+\/$/.test(p)) && 'profileInfo' in ((e.response as z.ZodObject).shape ?? {}));
const sectionKey = (e: Endpoint) => Object.keys((e.response as z.ZodObject).shape).find((k) => k !== 'status' && k !== 'profileInfo')!;
const sectionPath = (e: Endpoint, handle: string) => e.paths[0]!.replace(':handle', handle);

describe('privacy of profile sections (spec: private profiles expose only profileInfo, to friends too)', () => {
  it('knows the frodads section, at least', () => {
    expect(profileSections.map(sectionKey)).toContain('myFrodads');
  });

  for (const section of profileSections) {
    it(`${sectionKey(section)}: "private" for everyone else, friends included; the owner still sees it`, async () => {
      const shy = await sys.signUp();
      const friend = await sys.signUp();
      const stranger = await sys.signUp();
      await befriend(shy, friend);
      expect((await sys.post('/api/preferences/', { is_private: 'true' }, shy)).status).toBe(200);

      for (const viewer of [friend, stranger]) {
        await eventually(async () => {
          const res = await sys.get(sectionPath(section, shy.handle), viewer);
          expect(res.status, res.text).toBe(200);
          const body = section.response.parse(res.body) as Record<string, unknown>;
          expect(body[sectionKey(section)]).toBe('private');
          expect(body.profileInfo).toMatchObject({ handle: shy.handle, is_private: true, friend_status: viewer === friend ? 'friend' : 'not-friends' });
        });
      }
      const own = await sys.get(sectionPath(section, shy.handle), shy);
      expect(own.status, own.text).toBe(200);
      expect((section.response.parse(own.body) as Record<string, unknown>)[sectionKey(section)]).not.toBe('private');

      // Public again: the friend sees the section.
      expect((await sys.post('/api/preferences/', { is_private: 'false' }, shy)).status).toBe(200);
      await eventually(async () => expect((section.response.parse((await sys.get(sectionPath(section, shy.handle), friend)).body) as Record<string, unknown>)[sectionKey(section)]).not.toBe('private'));
    });
  }

  it('the frodads of a private profile stay hidden even from a frodad listed in them', async () => {
    const shy = await sys.signUp();
    const friend = await sys.signUp();
    await befriend(shy, friend);
    expect((await sys.post('/api/preferences/', { is_private: 'true' }, shy)).status).toBe(200);
    await eventually(async () => expect((await profile(friend, shy.handle)).myFrodads).toBe('private'));
    expect((await profile(shy, shy.handle)).myFrodads).toEqual({ [friend.handle]: expect.objectContaining({ friend_status: 'friends' }) });
  });
});
