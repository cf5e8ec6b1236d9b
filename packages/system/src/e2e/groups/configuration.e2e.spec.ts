import { castiesApi, ErrorBodySchema, groupsAdminApi, groupsApi } from '@castie/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, newUser, TestSystem, type TestResponse, type TestUser } from '../../testing/harness.ts';
import { createGroup, multipart, PNG } from '../../testing/helpers.ts';

// Operators change a group after creating it (POST /admin/groups/{slug}/): what members see next.
let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
}, 30_000);
afterAll(() => sys?.close(), 30_000);

const bearer = () => ({ authorization: `Bearer ${sys.adminToken}` });
const configure = (slug: string, fields: Record<string, unknown>) => sys.admin('POST', `/admin/groups/${slug}/`, fields);
const configureWithIcon = (slug: string, fields: Record<string, string>) => {
  const { payload, headers } = multipart(fields, { field: 'groupIcon', name: 'icon.png', bytes: PNG, type: 'image/png' });
  return sys.request('POST', `/admin/groups/${slug}/`, { payload, headers: { ...headers, ...bearer() } });
};
const anError = (res: TestResponse, status: number, type: string) => {
  expect(res.status, res.text).toBe(status);
  return expect(ErrorBodySchema.parse(res.body)).toMatchObject({ status, error_type: type });
};
const newCastie = async (slug: string, user: TestUser, question: string) => {
  const res = await sys.post('/api/casties/create/', { group_slug: slug, poll_type: 'Open', question, answer_type: 'Write-in answers', display_created_by: 'true' }, user);
  expect(res.status, res.text).toBe(200);
  return res.body.castie_uuid as string;
};
const listed = async (slug: string, user: TestUser) => groupsApi.listGroups.response.parse((await sys.get('/api/groups/', user)).body).groups[slug];

describe('configuring a group', () => {
  it('renames a group and replaces its icon: a member sees the new name and icon everywhere, and the old icon is gone', async () => {
    const slug = `wx-${Math.random().toString(36).slice(2, 7)}`;
    const first = multipart({ slug, groupName: 'Rainfall', groupInfoText: 'drops', requiresApproval: 'false', accessDeniedMessage: '' }, { field: 'groupIcon', name: 'icon.png', bytes: PNG, type: 'image/png' });
    const created = await sys.request('POST', '/admin/groups/', { payload: first.payload, headers: { ...first.headers, ...bearer() } });
    const oldIcon = (created.body.group as { groupIcon: string }).groupIcon;
    expect(oldIcon).toMatch(/^\/media\//);
    const ann = await sys.signUp(newUser('ann'));
    await sys.post(`/api/groups/${slug}/follow/`, {}, ann);
    const uuid = await newCastie(slug, ann, 'Will it rain on Sunday?');

    const res = await configureWithIcon(slug, { groupName: 'Climate', groupInfoText: 'Warmer every year' });
    expect(res.status, res.text).toBe(200);
    const answer = groupsAdminApi.configureGroup.response.parse(res.body);
    expect(answer.updated_fields).toEqual(['groupName', 'groupInfoText', 'groupIcon']);
    const newIcon = answer.group.groupIcon;
    expect(answer.group).toMatchObject({ slug, groupName: 'Climate', groupInfoText: 'Warmer every year', followersCount: 1, numberCasties: 1 });
    expect(newIcon).toMatch(/^\/media\//);
    expect(newIcon).not.toBe(oldIcon);

    // The new icon is served; the old file was deleted, as nothing shows it any more.
    expect((await sys.get(newIcon)).status).toBe(200);
    expect((await sys.get(oldIcon)).status).toBe(404);

    // The groups service answers at once (operators' writes wait for it) ...
    expect(await listed(slug, ann)).toMatchObject({ groupName: 'Climate', groupInfoText: 'Warmer every year', groupIcon: newIcon, following: true });
    const found = groupsApi.searchGroups.response.parse((await sys.get('/api/search/groups/?q=climate', ann)).body).search_results;
    expect(found[slug]).toMatchObject({ groupName: 'Climate', groupIcon: newIcon });
    expect((await sys.get('/api/search/groups/?q=rainfall', ann)).body.search_results).toEqual({});
    expect((await sys.get('/api/hamburger/', ann)).body.groups).toContainEqual(['Climate', slug]);
    expect((await sys.get('/api/casties/create/groups/', ann)).body.groups).toContainEqual(['Climate', slug]);
    // ... and the casties service's copy follows: group page, leaderboards, feeds, search.
    await eventually(async () => {
      const page = castiesApi.group.response.parse((await sys.get(`/api/groups/${slug}/`, ann)).body);
      expect(page).toMatchObject({ groupName: 'Climate', groupIcon: newIcon });
      expect(page.casties).toHaveProperty(uuid);
      expect((await sys.get(`/api/leaderboard/${slug}/`, ann)).body.leaderboard_groups).toContainEqual({ slug, groupName: 'Climate' });
    });
    const home = castiesApi.home.response.parse((await sys.get('/api/home/following/', ann)).body);
    expect(home).toMatchObject({ casties: { [uuid]: { groupSlug: slug, question: 'Will it rain on Sunday?' } } });
    expect((await sys.get('/api/search/casties/?q=rain on sunday', ann)).body.search_results).toHaveProperty(uuid);
  });

  it('switching approval off lets in everyone who waited (told so, under the new name) and shows its Casties to all', async () => {
    const slug = await createGroup(sys, { requiresApproval: true, groupName: 'Inner Circle' });
    const [dan, ann, bob] = [await sys.signUp(newUser('dan')), await sys.signUp(newUser('ann')), await sys.signUp(newUser('bob'))];
    await sys.post(`/api/groups/${slug}/follow/`, {}, dan);
    await sys.admin('POST', `/admin/groups/${slug}/access/${dan.handle}/grant/`);
    // The grant is the admin's write: the casties service learns it soon, not at once (rule 6
    // makes dan's requests wait for his own writes only). Refused until then, and nothing made.
    const uuid = await eventually(() => newCastie(slug, dan, 'Members only question?'));
    expect((await sys.post(`/api/groups/${slug}/follow/`, {}, ann)).body.access).toBe('pending');
    expect((await sys.get(`/api/casties/${uuid}/`, bob)).status).toBe(404);

    const res = await configure(slug, { requiresApproval: false, groupName: 'Open Circle' });
    expect(res.status, res.text).toBe(200);
    expect(groupsAdminApi.configureGroup.response.parse(res.body)).toMatchObject({ updated_fields: ['groupName', 'requiresApproval'], granted: [ann.handle], group: { requiresApproval: false, followersCount: 2 } });

    expect(await listed(slug, ann)).toMatchObject({ groupName: 'Open Circle', requiresApproval: false, following: true, access: 'granted' });
    expect((await sys.admin('GET', `/admin/access-requests/?group=${slug}`)).body.number_requests).toBe(0);
    await eventually(async () => {
      const notes = (await sys.get('/api/notifications/', ann)).body.notifications as { notification_type: string; message: string }[];
      expect(notes).toContainEqual(expect.objectContaining({ notification_type: 'group-access-granted', message: 'You have been approved to join the Open Circle group' }));
    });
    // Someone who never asked sees its Casties now, in the feeds, in search and in detail.
    await eventually(async () => {
      expect((await sys.get('/api/home/new/', bob)).body.casties).toHaveProperty(uuid);
      expect((await sys.get('/api/search/casties/?q=members only', bob)).body.search_results).toHaveProperty(uuid);
      expect((await sys.get(`/api/casties/${uuid}/`, bob)).status).toBe(200);
    });
    // And following is immediate now.
    expect((await sys.post(`/api/groups/${slug}/follow/`, {}, bob)).body).toMatchObject({ access: null, following: true });
  });

  it('switching approval on keeps the followers in (as granted) and hides its Casties from everyone else', async () => {
    const slug = await createGroup(sys);
    const [ann, bob] = [await sys.signUp(newUser('ann')), await sys.signUp(newUser('bob'))];
    await sys.post(`/api/groups/${slug}/follow/`, {}, ann);
    const uuid = await newCastie(slug, ann, 'Is this still public?');
    await eventually(async () => expect((await sys.get('/api/home/new/', bob)).body.casties).toHaveProperty(uuid));

    const res = await configure(slug, { requiresApproval: 'True', accessDeniedMessage: 'Ask Ann' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ updated_fields: ['requiresApproval', 'accessDeniedMessage'], granted: [] });

    expect(await listed(slug, ann)).toMatchObject({ requiresApproval: true, following: true, access: 'granted', accessDeniedMessage: 'Ask Ann' });
    expect((await sys.get('/api/home/following/', ann)).body.casties).toHaveProperty(uuid);
    await eventually(async () => {
      expect((await sys.get('/api/home/new/', bob)).body.casties).not.toHaveProperty(uuid);
      expect((await sys.get(`/api/casties/${uuid}/`, bob)).status).toBe(404);
    });
    expect((await sys.post(`/api/groups/${slug}/follow/`, {}, bob)).body).toMatchObject({ access: 'pending', following: false });
  });

  it('restricting creation leaves only named creators able to create Casties', async () => {
    const slug = await createGroup(sys);
    const ann = await sys.signUp(newUser('ann'));
    await sys.post(`/api/groups/${slug}/follow/`, {}, ann);
    expect(await listed(slug, ann)).toMatchObject({ canCreateCastie: true });
    expect((await configure(slug, { restrictCreation: true })).status).toBe(200);
    expect(await listed(slug, ann)).toMatchObject({ canCreateCastie: false });
    await eventually(async () => {
      const refused = await sys.post('/api/casties/create/', { group_slug: slug, poll_type: 'Open', question: 'May I?', answer_type: 'Write-in answers', display_created_by: 'true' }, ann);
      expect(refused.body.error_type).toBe('castie_not_created');
    });
  });
});

describe('configuring a group: mistakes, in the envelope', () => {
  it('refuses without the bearer token or with a wrong one (401 authorization_failed)', async () => {
    const slug = await createGroup(sys);
    anError(await sys.request('POST', `/admin/groups/${slug}/`, { json: { groupName: 'X' } }), 401, 'authorization_failed');
    anError(await sys.request('POST', `/admin/groups/${slug}/`, { json: { groupName: 'X' }, headers: { authorization: 'Bearer wrong' } }), 401, 'authorization_failed');
    expect((await sys.admin('GET', `/admin/groups/${slug}/`)).body).toMatchObject({ group: { groupName: `Group ${slug}` } });
  });

  it('answers 404 object_not_found for an unknown or malformed group', async () => {
    for (const slug of ['no-such-group', 'Not%20A%20Slug']) {
      const res = await configure(slug, { groupName: 'X' });
      anError(res, 404, 'object_not_found');
      expect(res.body.error_message).toBe('the requested group could not be found');
    }
  });

  it('answers 400 when there is nothing to change or a value is unacceptable, and changes nothing', async () => {
    const slug = await createGroup(sys);
    const nothing = await configure(slug, {});
    anError(nothing, 400, 'missing_request_data');
    expect(nothing.body.error_message).toMatch(/at least one of groupName/);
    const same = await configure(slug, { groupName: `Group ${slug}`, requiresApproval: false });
    anError(same, 400, 'invalid_request');
    expect(same.body.error_message).toBe('nothing has changed- no data to update');
    for (const body of [{ groupName: 'x'.repeat(81) }, { groupName: '   ' }, { groupInfoText: 'x'.repeat(2001) }, { requiresApproval: 'maybe' }, { groupName: 'a\u0000b' }]) {
      anError(await configure(slug, body), 400, 'invalid_request');
    }
    // A file that is not an image: refused before anything changes, the name sent with it included.
    const { payload, headers } = multipart({ groupName: 'Renamed' }, { field: 'groupIcon', name: 'icon.png', bytes: Buffer.from('<?php echo 1; ?>'), type: 'image/png' });
    const bad = await sys.request('POST', `/admin/groups/${slug}/`, { payload, headers: { ...headers, ...bearer() } });
    expect(bad.body).toEqual({ status: 400, error_type: 'invalid_request', error_message: 'Images must be in .jpg, .jpeg, .gif, .png format.' });
    expect((await sys.admin('GET', `/admin/groups/${slug}/`)).body).toMatchObject({ group: { groupName: `Group ${slug}`, groupIcon: '', requiresApproval: false } });
  });
});
