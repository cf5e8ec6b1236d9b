import { groupsApi } from '@castie/contracts';
import { TestSystem, type TestUser } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { befriend, createGroup } from '../../testing/helpers.ts';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

const groupOf = async (slug: string, user: TestUser) => groupsApi.listGroups.response.parse((await sys.get('/api/groups/', user)).body).groups[slug]!;
const followersOf = async (slug: string, user: TestUser) => groupsApi.followers.response.parse((await sys.get(`/api/groups/${slug}/followers/`, user)).body).followers;
const friendFollowersOf = async (slug: string, user: TestUser) => groupsApi.friendFollowers.response.parse((await sys.get(`/api/groups/${slug}/followers/frodads/`, user)).body).friendFollowers;

describe('followers of a group', () => {
  it('lists followers as Frodad objects (no level) with their relation to the requester', async () => {
    const slug = await createGroup(sys);
    const [ann, bob, cat] = [await sys.signUp(), await sys.signUp(), await sys.signUp()];
    for (const u of [ann, bob]) await sys.post(`/api/groups/${slug}/follow/`, {}, u);
    await expect.poll(async () => Object.keys(await followersOf(slug, cat)).length).toBe(2);
    expect(await followersOf(slug, ann)).toEqual({
      [ann.handle]: { handle: ann.handle, firstName: ann.firstName, lastName: ann.lastName, profPic: '', friend_status: 'self' },
      [bob.handle]: { handle: bob.handle, firstName: bob.firstName, lastName: bob.lastName, profPic: '', friend_status: 'not-friends' },
    });
    expect(await friendFollowersOf(slug, ann)).toEqual({});
  });

  it('friendsCount is 0 until friendships exist; then frodads who follow are counted and listed', async () => {
    const slug = await createGroup(sys);
    const [ann, bob, cat] = [await sys.signUp(), await sys.signUp(), await sys.signUp()];
    for (const u of [bob, cat]) await sys.post(`/api/groups/${slug}/follow/`, {}, u);
    await expect.poll(async () => (await groupOf(slug, ann)).followersCount).toBe(2);
    expect(await groupOf(slug, ann)).toMatchObject({ friendsCount: 0, following: false });

    await befriend(sys, ann, bob);
    await expect.poll(async () => (await groupOf(slug, ann)).friendsCount).toBe(1);
    expect(await friendFollowersOf(slug, ann)).toEqual({ [bob.handle]: { handle: bob.handle, firstName: bob.firstName, lastName: bob.lastName, profPic: '', friend_status: 'friends' } });
    expect((await followersOf(slug, ann))[bob.handle]!.friend_status).toBe('friends');
    // A pending request is no friendship.
    await sys.post(`/api/add-frodad/${cat.handle}/`, {}, ann);
    await expect.poll(async () => (await followersOf(slug, ann))[cat.handle]!.friend_status).toBe('pending');
    expect((await groupOf(slug, ann)).friendsCount).toBe(1);

    await sys.post(`/api/unfrodad/${bob.handle}/`, {}, ann);
    await expect.poll(async () => (await groupOf(slug, ann)).friendsCount).toBe(0);
    expect(await friendFollowersOf(slug, ann)).toEqual({});
  });

  it('a pending follower is not a follower', async () => {
    const slug = await createGroup(sys, { requiresApproval: true });
    const [ann, bob] = [await sys.signUp(), await sys.signUp()];
    await sys.post(`/api/groups/${slug}/follow/`, {}, ann);
    // Ann's own read waits for her write, so the groups read model has her pending request now.
    expect((await groupOf(slug, ann)).access).toBe('pending');
    expect(await followersOf(slug, bob)).toEqual({});
    expect((await groupOf(slug, bob)).followersCount).toBe(0);
    // Once granted, she is one: the absence above was not just a lagging read.
    await sys.admin('POST', `/admin/groups/${slug}/access/${ann.handle}/grant/`);
    await expect.poll(async () => (await groupOf(slug, bob)).followersCount).toBe(1);
  });

  it('deleted accounts vanish from the list and the count', async () => {
    const slug = await createGroup(sys);
    const [ann, bob] = [await sys.signUp(), await sys.signUp()];
    for (const u of [ann, bob]) await sys.post(`/api/groups/${slug}/follow/`, {}, u);
    await sys.post(`/api/profile/${bob.handle}/delete/`, {}, bob);
    await expect.poll(async () => Object.keys(await followersOf(slug, ann))).toEqual([ann.handle]);
    expect((await groupOf(slug, ann)).followersCount).toBe(1);
  });

  it('answers 404 object_not_found for an unknown group', async () => {
    const ann = await sys.signUp();
    for (const path of ['/api/groups/no-such-group/followers/', '/api/groups/no-such-group/followers/frodads/']) {
      expect((await sys.get(path, ann)).body).toEqual({ status: 404, error_type: 'object_not_found', error_message: 'the requested group could not be found', group_slug: 'no-such-group' });
    }
  });
});
