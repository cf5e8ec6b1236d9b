import { ErrorBodySchema, groupsAdminApi, groupsApi } from '@castie/contracts';
import { form, TestSystem } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, multipart, PNG } from '../../testing/helpers.ts';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

const bearer = () => ({ authorization: `Bearer ${sys.adminToken}` });
const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}`;

describe('admin API: creating groups', () => {
  it('creates a group from JSON and answers the Group as operators see it', async () => {
    const slug = unique('sports');
    const res = await sys.admin('POST', '/admin/groups/', { slug, groupName: 'Sports', groupInfoText: 'all sports', requiresApproval: false, accessDeniedMessage: '' });
    expect(res.status).toBe(200);
    expect(groupsAdminApi.createGroup.response.parse(res.body).group).toEqual({
      slug,
      groupName: 'Sports',
      groupInfoText: 'all sports',
      groupIcon: '',
      requiresApproval: false,
      accessDeniedMessage: '',
      followersCount: 0,
      friendsCount: 0,
      accuracy: null,
      access: null,
      following: false,
      canCreateCastie: false,
      numberCasties: 0,
      restrictCreation: false,
      admins: [],
      creators: [],
    });
    // Users see it at once.
    const user = await sys.signUp();
    expect(groupsApi.listGroups.response.parse((await sys.get('/api/groups/', user)).body).groups[slug]).toMatchObject({ groupName: 'Sports' });
  });

  it('takes form bodies with the booleans clients send (True/False), without the trailing slash too', async () => {
    const slug = unique('closed');
    const res = await sys.request('POST', '/admin/groups', {
      payload: form({ slug, groupName: 'Closed', groupInfoText: 'members', requiresApproval: 'True', accessDeniedMessage: '<b>no</b>', restrictCreation: 'False' }),
      headers: { ...bearer(), 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.body).toMatchObject({ status: 200, group: { slug, requiresApproval: true, restrictCreation: false, accessDeniedMessage: '<b>no</b>' } });
  });

  it('stores an uploaded icon, checked by its bytes, and serves it back', async () => {
    const slug = unique('icons');
    const { payload, headers } = multipart({ slug, groupName: 'Icons', groupInfoText: 'i', requiresApproval: 'false', accessDeniedMessage: '' }, { field: 'groupIcon', name: 'icon.png', bytes: PNG, type: 'image/png' });
    const res = await sys.request('POST', '/admin/groups/', { payload, headers: { ...headers, ...bearer() } });
    expect(res.status).toBe(200);
    const icon = (res.body.group as { groupIcon: string }).groupIcon;
    expect(icon).toMatch(/^\/media\/uploads\/[0-9a-f]{32}\.png$/);
    const served = await sys.get(icon);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
  });

  it('refuses an icon that is not an image, and creates nothing', async () => {
    const slug = unique('bad-icon');
    const { payload, headers } = multipart({ slug, groupName: 'Bad', groupInfoText: 'i', requiresApproval: 'false', accessDeniedMessage: '' }, { field: 'groupIcon', name: 'icon.png', bytes: Buffer.from('<?php echo 1; ?>'), type: 'image/png' });
    const res = await sys.request('POST', '/admin/groups/', { payload, headers: { ...headers, ...bearer() } });
    expect(res.body).toEqual({ status: 400, error_type: 'invalid_request', error_message: 'Images must be in .jpg, .jpeg, .gif, .png format.' });
    expect((await sys.admin('POST', `/admin/groups/${slug}/creators/nobody/`)).body.error_message).toBe('the requested group could not be found');
  });

  it('keeps slugs unique', async () => {
    const slug = await createGroup(sys);
    const again = await sys.admin('POST', '/admin/groups/', { slug, groupName: 'Other', groupInfoText: '', requiresApproval: true, accessDeniedMessage: '' });
    expect(again.status).toBe(400);
    expect(ErrorBodySchema.parse(again.body)).toMatchObject({ error_type: 'invalid_request', error_message: `a group with the slug ${slug} already exists` });
  });

  it('validates slugs and required fields', async () => {
    for (const slug of ['Upper', 'with space', 'under_score', '-dash', 'é']) {
      const res = await sys.admin('POST', '/admin/groups/', { slug, groupName: 'X', groupInfoText: '', requiresApproval: false, accessDeniedMessage: '' });
      expect(res.body, slug).toMatchObject({ status: 400, error_type: 'invalid_request', error_message: 'slug must contain only lowercase letters, digits and dashes' });
    }
    const missing = await sys.admin('POST', '/admin/groups/', { slug: unique('x'), groupInfoText: '', requiresApproval: false, accessDeniedMessage: '' });
    expect(missing.body).toMatchObject({ status: 400, error_type: 'missing_request_data', error_message: 'groupName is required' });
    const notBool = await sys.admin('POST', '/admin/groups/', { slug: unique('x'), groupName: 'X', groupInfoText: '', requiresApproval: 'maybe', accessDeniedMessage: '' });
    expect(notBool.body).toMatchObject({ status: 400, error_type: 'invalid_request' });
  });

  it('needs the bearer token', async () => {
    const res = await sys.request('POST', '/admin/groups/', { json: { slug: unique('x'), groupName: 'X', groupInfoText: '', requiresApproval: false, accessDeniedMessage: '' } });
    expect(res.status).toBe(401);
    expect(res.body.error_type).toBe('authorization_failed');
    // Users' credentials are no admin token either.
    const user = await sys.signUp();
    expect((await sys.request('POST', '/admin/groups/', { user, json: {} })).status).toBe(401);
  });

  it('the groups service refuses admin calls that did not come through the gateway check', async () => {
    const groups = sys.system.services.get('groups')!.app;
    const res = await groups.inject({ method: 'POST', url: '/admin/groups/', payload: { slug: unique('x'), groupName: 'X', groupInfoText: '', requiresApproval: false, accessDeniedMessage: '' } });
    expect(res.statusCode).toBe(401);
    expect(res.json().error_type).toBe('authorization_failed');
  });
});

describe('admin API: admins and creators', () => {
  it('names group admins and creators by handle, once each', async () => {
    const slug = await createGroup(sys, { restrictCreation: true });
    const [ann, bob] = [await sys.signUp(), await sys.signUp()];
    expect((await sys.admin('POST', `/admin/groups/${slug}/admins/${ann.handle}/`)).body).toMatchObject({ status: 200, group: { admins: [ann.handle], creators: [] } });
    const creators = await sys.admin('POST', `/admin/groups/${slug}/creators/${bob.handle}`);
    expect(groupsAdminApi.nameCreator.response.parse(creators.body).group).toMatchObject({ admins: [ann.handle], creators: [bob.handle], restrictCreation: true });
    expect((await sys.admin('POST', `/admin/groups/${slug}/creators/${bob.handle}/`)).body).toMatchObject({ group: { creators: [bob.handle] } });
  });

  it('restricted creation: only named creators and admins who follow may create Casties', async () => {
    const slug = await createGroup(sys, { restrictCreation: true });
    const [ann, bob, cat] = [await sys.signUp(), await sys.signUp(), await sys.signUp()];
    await sys.admin('POST', `/admin/groups/${slug}/creators/${bob.handle}/`);
    await sys.admin('POST', `/admin/groups/${slug}/admins/${cat.handle}/`);
    const canCreate = async (user: typeof ann) => groupsApi.listGroups.response.parse((await sys.get('/api/groups/', user)).body).groups[slug]!.canCreateCastie;
    expect(await canCreate(bob)).toBe(false);
    for (const user of [ann, bob, cat]) await sys.post(`/api/groups/${slug}/follow/`, {}, user);
    expect([await canCreate(ann), await canCreate(bob), await canCreate(cat)]).toEqual([false, true, true]);
  });

  it('answers 404 for unknown groups and users, inactive_user for deleted ones', async () => {
    const slug = await createGroup(sys);
    const ann = await sys.signUp();
    expect((await sys.admin('POST', `/admin/groups/nope-${slug}/admins/${ann.handle}/`)).body).toMatchObject({ status: 404, error_type: 'object_not_found', error_message: 'the requested group could not be found' });
    expect((await sys.admin('POST', `/admin/groups/${slug}/admins/nobody-here/`)).body).toMatchObject({ status: 404, error_type: 'object_not_found', error_message: 'the requested user could not be found' });
    await sys.post(`/api/profile/${ann.handle}/delete/`, {}, ann);
    await expect.poll(async () => (await sys.admin('POST', `/admin/groups/${slug}/creators/${ann.handle}/`)).body.error_type).toBe('inactive_user');
    expect((await sys.admin('POST', `/admin/groups/${slug}/access/nobody-here/grant/`)).status).toBe(404);
  });
});
