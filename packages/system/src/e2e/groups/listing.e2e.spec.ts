import { groupsApi } from '@castie/contracts';
import { TestSystem, type TestUser } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup } from '../../testing/helpers.ts';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

const tag = () => Math.random().toString(36).slice(2, 8);
const listGroups = async (user: TestUser) => groupsApi.listGroups.response.parse((await sys.get('/api/groups/', user)).body).groups;

describe('GET /api/hamburger/ and /api/casties/create/groups/', () => {
  it('list followed groups, and those one may create in, as [name, slug] alphabetically', async () => {
    const t = tag();
    const zebra = await createGroup(sys, { slug: `zebra-${t}`, groupName: `Zebras ${t}` });
    const apple = await createGroup(sys, { slug: `apple-${t}`, groupName: `apples ${t}` });
    const mango = await createGroup(sys, { slug: `mango-${t}`, groupName: `Mangos ${t}`, restrictCreation: true });
    const closed = await createGroup(sys, { slug: `closed-${t}`, groupName: `Closed ${t}`, requiresApproval: true });
    const user = await sys.signUp();
    expect((await sys.get('/api/hamburger/', user)).body).toEqual({ status: 200, handle: user.handle, groups: [] });
    for (const slug of [zebra, mango, apple, closed]) await sys.post(`/api/groups/${slug}/follow/`, {}, user);

    const menu = await sys.get('/api/hamburger/', user);
    expect(groupsApi.hamburger.response.parse(menu.body)).toEqual({
      status: 200,
      handle: user.handle,
      groups: [
        [`apples ${t}`, apple],
        [`Mangos ${t}`, mango],
        [`Zebras ${t}`, zebra],
      ],
    });
    const create = await sys.get('/api/casties/create/groups/', user);
    expect(groupsApi.createCastieGroups.response.parse(create.body)).toEqual({
      status: 200,
      groups: [
        [`apples ${t}`, apple],
        [`Zebras ${t}`, zebra],
      ],
    });
    await sys.post(`/api/groups/${zebra}/unfollow/`, {}, user);
    expect((await sys.get('/api/casties/create/groups/', user)).body.groups).toEqual([[`apples ${t}`, apple]]);
  });
});

describe('GET /api/groups/', () => {
  it('shows every group as a Group object for the requester, indexed by slug', async () => {
    const slug = await createGroup(sys, { groupInfoText: 'about it' });
    const [ann, bob] = [await sys.signUp(), await sys.signUp()];
    await sys.post(`/api/groups/${slug}/follow/`, {}, ann);
    const forAnn = await listGroups(ann);
    const forBob = await listGroups(bob);
    expect(forAnn[slug]).toEqual({
      slug,
      groupName: `Group ${slug}`,
      groupInfoText: 'about it',
      groupIcon: '',
      requiresApproval: false,
      accessDeniedMessage: 'ask the admins',
      followersCount: 1,
      friendsCount: 0,
      accuracy: null,
      access: null,
      following: true,
      canCreateCastie: true,
      numberCasties: 0,
    });
    await expect.poll(async () => (await listGroups(bob))[slug]).toMatchObject({ followersCount: 1, following: false, canCreateCastie: false });
    expect(Object.keys(forBob)).toContain(slug);
  });

  it('counts the Casties of a group and the requester accuracy on its answered ones (from the casties topic)', async () => {
    const slug = await createGroup(sys);
    const [ann, bob] = [await sys.signUp(), await sys.signUp()];
    for (const u of [ann, bob]) await sys.post(`/api/groups/${slug}/follow/`, {}, u);
    const uuids: string[] = [];
    for (const question of ['Will it rain?', 'Will it snow?']) {
      const created = await sys.post('/api/casties/create/', { group_slug: slug, poll_type: 'Open', question, answer_type: 'Write-in answers', display_created_by: 'true' }, ann);
      expect(created.status, created.text).toBe(200);
      uuids.push(created.body.castie_uuid as string);
    }
    await expect.poll(async () => (await listGroups(bob))[slug]!.numberCasties).toBe(2);
    expect((await listGroups(ann))[slug]).toMatchObject({ numberCasties: 2, accuracy: null });

    // Bob is right on the first and wrong on the second; Ann (the creator) never forecast.
    for (const [uuid, text] of [
      [uuids[0]!, 'yes it will'],
      [uuids[1]!, 'no'],
    ] as const) {
      expect((await sys.post(`/api/casties/${uuid}/forecast/`, { forecast_text: text }, bob)).status).toBe(200);
    }
    for (const uuid of uuids) expect((await sys.post(`/api/casties/${uuid}/answer/`, { keyword: 'yes' }, ann)).status).toBe(200);
    await expect.poll(async () => (await listGroups(bob))[slug]!.accuracy).toBe(50);
    expect((await listGroups(ann))[slug]!.accuracy).toBeNull();
  });
});

describe('GET /api/search/groups/', () => {
  it('finds groups by name, slug or info text, case-insensitively, as Group objects', async () => {
    const t = tag();
    const a = await createGroup(sys, { slug: `chess-${t}`, groupName: `Chess Club ${t}`, groupInfoText: 'openings' });
    const b = await createGroup(sys, { slug: `go-${t}`, groupName: `Go ${t}`, groupInfoText: 'Board games like CHESS' });
    await createGroup(sys, { slug: `darts-${t}`, groupName: `Darts ${t}` });
    const user = await sys.signUp();
    const res = await sys.get(`/api/search/groups/?q=chess`, user);
    const found = groupsApi.searchGroups.response.parse(res.body);
    expect(Object.keys(found.search_results).filter((s) => s.endsWith(t)).sort()).toEqual([a, b].sort());
    expect(found.search_results[a]).toMatchObject({ groupName: `Chess Club ${t}`, following: false });
    expect(groupsApi.searchGroups.response.parse((await sys.get(`/api/search/groups/?q=${t.toUpperCase()}`, user)).body).search_results).toHaveProperty(`darts-${t}`);
  });

  it('pages with limit and before', async () => {
    const t = tag();
    const slugs = [];
    for (let i = 0; i < 3; i++) slugs.push(await createGroup(sys, { slug: `page${i}-${t}`, groupName: `Paged ${t} ${i}` }));
    const user = await sys.signUp();
    const first = groupsApi.searchGroups.response.parse((await sys.get(`/api/search/groups/?q=paged ${t}&limit=2`, user)).body);
    expect(Object.keys(first.search_results)).toEqual(slugs.slice(0, 2));
    expect(first).toMatchObject({ has_more: true, next_before: slugs[1] });
    const second = groupsApi.searchGroups.response.parse((await sys.get(`/api/search/groups/?q=paged ${t}&limit=2&before=${first.next_before}`, user)).body);
    expect(Object.keys(second.search_results)).toEqual([slugs[2]]);
    expect(second).toMatchObject({ has_more: false, next_before: null });
    expect((await sys.get('/api/search/groups/?limit=0', user)).body.error_type).toBe('missing_request_data');
  });
});
