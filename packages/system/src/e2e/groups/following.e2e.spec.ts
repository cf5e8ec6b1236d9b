import { ErrorBodySchema, GROUPS_TOPIC, groupsApi } from '@castie/contracts';
import { TestSystem, type TestUser } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup as createGroupWith, loggedEvents } from '../../testing/helpers.ts';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

const createGroup = (fields: Record<string, unknown> = {}) => createGroupWith(sys, fields);

const follow = (slug: string, user: TestUser) => sys.post(`/api/groups/${slug}/follow/`, {}, user);
const unfollow = (slug: string, user: TestUser) => sys.post(`/api/groups/${slug}/unfollow/`, {}, user);
const groupOf = async (slug: string, user: TestUser) => {
  const res = await sys.get('/api/groups/', user);
  return groupsApi.listGroups.response.parse(res.body).groups[slug];
};

describe('following a public group', () => {
  it('(false, null) -> follow -> (true, null); the Group object shows it', async () => {
    const slug = await createGroup();
    const ann = await sys.signUp();
    expect(await groupOf(slug, ann)).toMatchObject({ following: false, access: null, followersCount: 0, canCreateCastie: false });
    const res = await follow(slug, ann);
    expect(groupsApi.follow.response.parse(res.body)).toEqual({ status: 200, handle: ann.handle, group_slug: slug, access: null, following: true });
    expect(await groupOf(slug, ann)).toMatchObject({ following: true, access: null, followersCount: 1, canCreateCastie: true, accuracy: null, numberCasties: 0 });
  });

  it('(true, any) -> follow -> 400 improper_group_request carrying handle and group_slug', async () => {
    const slug = await createGroup();
    const ann = await sys.signUp();
    await follow(slug, ann);
    const again = await follow(slug, ann);
    expect(again.status).toBe(400);
    expect(ErrorBodySchema.parse(again.body)).toEqual({ status: 400, error_type: 'improper_group_request', error_message: 'cannot follow the Group. user is already following', handle: ann.handle, group_slug: slug });
  });

  it('(true, any) -> unfollow -> (false, null); (false, any) -> unfollow -> improper_group_request', async () => {
    const slug = await createGroup();
    const ann = await sys.signUp();
    const never = await unfollow(slug, ann);
    expect(never.body).toEqual({ status: 400, error_type: 'improper_group_request', error_message: 'cannot un-follow the Group. user does not follow it yet', handle: ann.handle, group_slug: slug });
    await follow(slug, ann);
    const res = await unfollow(slug, ann);
    expect(groupsApi.unfollow.response.parse(res.body)).toEqual({ status: 200, handle: ann.handle, group_slug: slug, access: null, following: false });
    expect(await groupOf(slug, ann)).toMatchObject({ following: false, access: null, followersCount: 0 });
    expect((await unfollow(slug, ann)).body.error_type).toBe('improper_group_request');
  });

  it('answers 404 object_not_found for an unknown or malformed group', async () => {
    const ann = await sys.signUp();
    for (const path of ['/api/groups/no-such-group/follow/', '/api/groups/no-such-group/unfollow/', '/api/groups/Not%20A%20Slug/follow/']) {
      const res = await sys.post(path, {}, ann);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error_type: 'object_not_found', error_message: 'the requested group could not be found' });
    }
  });

  it('needs credentials', async () => {
    const slug = await createGroup();
    expect((await sys.post(`/api/groups/${slug}/follow/`)).status).toBe(401);
  });
});

describe('following an approval-required group', () => {
  it('pending until a group admin approves; then following with access granted and a GroupAccessGranted event', async () => {
    const slug = await createGroup({ requiresApproval: true, accessDeniedMessage: '<p>members only</p>' });
    const [ann, dan] = [await sys.signUp(), await sys.signUp()];
    expect((await sys.admin('POST', `/admin/groups/${slug}/admins/${dan.handle}/`)).status).toBe(200);

    const res = await follow(slug, ann);
    expect(groupsApi.follow.response.parse(res.body)).toEqual({ status: 200, handle: ann.handle, group_slug: slug, access: 'pending', following: false, access_pending: 'user has requested access to group' });
    expect(await groupOf(slug, ann)).toMatchObject({ following: false, access: 'pending', followersCount: 0, canCreateCastie: false, accessDeniedMessage: '<p>members only</p>' });
    // Asking again while pending repeats the answer.
    expect((await follow(slug, ann)).body).toMatchObject({ status: 200, access: 'pending', following: false });
    // A pending request is not a follow.
    expect((await unfollow(slug, ann)).body.error_type).toBe('improper_group_request');

    const list = await sys.get(`/api/groups/${slug}/requests/`, dan);
    expect(groupsApi.requests.response.parse(list.body)).toMatchObject({ group_slug: slug, number_requests: 1, requests: [{ handle: ann.handle, requestedDate: '2026-03-01', requestedTime: '12:00:00.000000' }] });

    const approved = await sys.post(`/api/groups/${slug}/requests/${ann.handle}/approve/`, {}, dan);
    expect(groupsApi.approveRequest.response.parse(approved.body)).toMatchObject({ handle: ann.handle, group_slug: slug, access: 'granted', following: true });
    // Dan's session waited for his write; Ann's view catches up within milliseconds.
    await expect.poll(async () => groupOf(slug, ann)).toMatchObject({ following: true, access: 'granted', followersCount: 1, canCreateCastie: true });
    expect((await sys.get(`/api/groups/${slug}/requests/`, dan)).body).toMatchObject({ number_requests: 0, requests: [] });

    const events = await groupEventsOf(slug);
    expect(events.filter((e) => e.type === 'GroupAccessGranted')).toEqual([{ type: 'GroupAccessGranted', actor: expect.any(String), data: { slug, userId: expect.stringMatching(/^[0-9a-f]{32}$/), grantedBy: expect.stringMatching(/^[0-9a-f]{32}$/) } }]);

    // Following again after unfollowing needs approval again.
    expect((await unfollow(slug, ann)).body).toMatchObject({ status: 200, following: false, access: null });
    expect((await follow(slug, ann)).body).toMatchObject({ access: 'pending', following: false });
  });

  it('a group admin may deny; the user may ask again', async () => {
    const slug = await createGroup({ requiresApproval: true });
    const [ann, dan] = [await sys.signUp(), await sys.signUp()];
    await sys.admin('POST', `/admin/groups/${slug}/admins/${dan.handle}/`);
    await follow(slug, ann);
    const denied = await sys.post(`/api/groups/${slug}/requests/${ann.handle}/deny/`, {}, dan);
    expect(groupsApi.denyRequest.response.parse(denied.body)).toMatchObject({ handle: ann.handle, access: null, following: false });
    await expect.poll(async () => groupOf(slug, ann)).toMatchObject({ following: false, access: null });
    expect((await sys.post(`/api/groups/${slug}/requests/${ann.handle}/deny/`, {}, dan)).body).toMatchObject({ status: 400, error_type: 'improper_group_request', handle: ann.handle, group_slug: slug });
    expect((await follow(slug, ann)).body).toMatchObject({ access: 'pending' });
  });

  it('operators grant through the admin API', async () => {
    const slug = await createGroup({ requiresApproval: true });
    const ann = await sys.signUp();
    await follow(slug, ann);
    const res = await sys.admin('POST', `/admin/groups/${slug}/access/${ann.handle}/grant/`);
    expect(res.body).toMatchObject({ status: 200, handle: ann.handle, group_slug: slug, access: 'granted', following: true });
    expect(await groupOf(slug, ann)).toMatchObject({ following: true, access: 'granted' });
    expect((await sys.admin('POST', `/admin/groups/${slug}/access/${ann.handle}/grant/`)).body).toMatchObject({ status: 400, error_type: 'improper_group_request' });
  });

  it('is 404 for everyone but the group admins', async () => {
    const slug = await createGroup({ requiresApproval: true });
    const [ann, eve] = [await sys.signUp(), await sys.signUp()];
    await follow(slug, ann);
    for (const res of [
      await sys.get(`/api/groups/${slug}/requests/`, eve),
      await sys.post(`/api/groups/${slug}/requests/${ann.handle}/approve/`, {}, eve),
      await sys.post(`/api/groups/${slug}/requests/${ann.handle}/deny/`, {}, ann),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error_type).toBe('object_not_found');
    }
    expect(await groupOf(slug, ann)).toMatchObject({ access: 'pending' });
  });
});

/** The events of one group's streams on the groups topic. */
async function groupEventsOf(slug: string) {
  return (await loggedEvents(sys, GROUPS_TOPIC)).filter((e) => e.streamId === `group-${slug}` || e.streamId.startsWith(`membership-${slug}-`)).map((e) => ({ type: e.type, actor: e.actor, data: e.data }));
}
