import { groupsApi } from '@castie/contracts';
import { TestSystem } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup } from '../../testing/helpers.ts';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

describe('GET /api/profile/{handle}/groups/', () => {
  it('shows profileInfo and the groups the person follows, as Group objects for the requester', async () => {
    const [open, closed, other] = [await createGroup(sys), await createGroup(sys, { requiresApproval: true }), await createGroup(sys)];
    const [ann, bob] = [await sys.signUp(), await sys.signUp()];
    await sys.post(`/api/groups/${open}/follow/`, {}, ann);
    await sys.post(`/api/groups/${closed}/follow/`, {}, ann);
    await sys.post(`/api/groups/${other}/follow/`, {}, bob);

    const own = groupsApi.profileGroups.response.parse((await sys.get(`/api/profile/${ann.handle}/groups/`, ann)).body);
    expect(own.profileInfo).toMatchObject({ handle: ann.handle, friend_status: 'self', groupsNumber: 1 });
    // Pending access is no follow.
    expect(Object.keys(own.myGroups)).toEqual([open]);
    expect((own.myGroups as Record<string, unknown>)[open]).toMatchObject({ slug: open, following: true });

    await expect.poll(async () => Object.keys((await sys.get(`/api/profile/${ann.handle}/groups/`, bob)).body.myGroups as object)).toEqual([open]);
    const seenByBob = groupsApi.profileGroups.response.parse((await sys.get(`/api/profile/${ann.handle}/groups/`, bob)).body);
    // Computed for the requester: Bob does not follow it.
    expect((seenByBob.myGroups as Record<string, unknown>)[open]).toMatchObject({ following: false, followersCount: 1 });
    expect(seenByBob.profileInfo.friend_status).toBe('not-friends');
  });

  it('with slugs_only answers the list of slugs', async () => {
    const [a, b] = [await createGroup(sys, { groupName: 'Bbb' }), await createGroup(sys, { groupName: 'Aaa' })];
    const ann = await sys.signUp();
    for (const slug of [a, b]) await sys.post(`/api/groups/${slug}/follow/`, {}, ann);
    const res = await sys.get(`/api/profile/${ann.handle}/groups/?slugs_only=True`, ann);
    expect(groupsApi.profileGroups.response.parse(res.body).myGroups).toEqual([b, a]);
  });

  it('a private profile shows only profileInfo to others, "private" in place of the groups', async () => {
    const slug = await createGroup(sys);
    const [ann, bob] = [await sys.signUp(), await sys.signUp()];
    await sys.post(`/api/groups/${slug}/follow/`, {}, ann);
    await sys.post('/api/preferences/', { is_private: 'true' }, ann);
    await expect.poll(async () => (await sys.get(`/api/profile/${ann.handle}/groups/`, bob)).body.myGroups).toBe('private');
    const res = groupsApi.profileGroups.response.parse((await sys.get(`/api/profile/${ann.handle}/groups/?slugs_only=true`, bob)).body);
    expect(res).toMatchObject({ myGroups: 'private', profileInfo: { handle: ann.handle, is_private: true } });
    expect(Object.keys((await sys.get(`/api/profile/${ann.handle}/groups/`, ann)).body.myGroups as object)).toEqual([slug]);
  });

  it('answers 404 object_not_found for an unknown user and 404 inactive_user for a deleted one', async () => {
    const [ann, bob] = [await sys.signUp(), await sys.signUp()];
    expect((await sys.get('/api/profile/nobody-at-all/groups/', ann)).body).toMatchObject({ status: 404, error_type: 'object_not_found', error_message: 'the requested user could not be found' });
    await sys.post(`/api/profile/${bob.handle}/delete/`, {}, bob);
    await expect.poll(async () => (await sys.get(`/api/profile/${bob.handle}/groups/`, ann)).body).toMatchObject({ status: 404, error_type: 'inactive_user', error_message: 'the profile you requested is not active' });
  });
});
