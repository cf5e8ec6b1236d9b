import { api } from '@castie/contracts';
import { multipart, newUser, PNG, TestSystem } from '../../testing/harness.ts';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

describe('profile edit through the gateway', () => {
  it('shows the editable fields of one own profile, empty strings for no value', async () => {
    const user = await sys.signUp();
    const res = await sys.get(`/api/profile/${user.handle}/edit`, user);
    expect(api.identity.getProfileEdit.response.parse(res.body)).toEqual({ status: 200, handle: user.handle, firstName: user.firstName, lastName: user.lastName, city: '', state: '', profPic: '', backgroundPic: '' });
  });

  it("refuses to show another user's edit form", async () => {
    const other = await sys.signUp();
    const user = await sys.signUp();
    const res = await sys.get(`/api/profile/${other.handle}/edit/`, user);
    expect(res.status).toBe(400);
    expect(res.body.error_type).toBe('not_allowed');
  });

  it('saves only the fields that changed and lists them', async () => {
    const user = await sys.signUp();
    const res = await sys.post('/api/profile/edit/', { handle: user.handle, firstName: user.firstName, lastName: 'Changed', city: 'Lyon', state: 'France' }, user);
    expect(res.body).toEqual({ status: 200, message: 'data has been successfully updated', updated_fields: ['lastName', 'city', 'state'] });
    const again = await sys.post('/api/profile/edit/', { handle: user.handle, firstName: user.firstName, lastName: 'Changed', city: 'Lyon', state: 'France' }, user);
    expect(again.body).toEqual({ status: 200, message: 'nothing has changed- no data to update' });
    expect((await sys.get(`/api/profile/${user.handle}/edit/`, user)).body).toMatchObject({ lastName: 'Changed', city: 'Lyon', state: 'France' });
  });

  it('changes the handle, frees the old one and refuses a taken one', async () => {
    const other = await sys.signUp();
    const user = await sys.signUp();
    expect((await sys.post('/api/profile/edit/', { handle: other.handle }, user)).body).toMatchObject({ status: 400, error_type: 'handle_not_unique' });
    const renamed = newUser('renamed').handle;
    expect((await sys.post('/api/profile/edit/', { handle: renamed }, user)).body).toEqual({ status: 200, message: 'data has been successfully updated', updated_fields: ['handle'] });
    expect((await sys.get(`/api/profile/${renamed}/edit/`, user)).body).toMatchObject({ handle: renamed });
    // The very next request goes as the new handle (the gateway keeps verified credentials).
    expect((await sys.get('/api/home/new/', user)).body).toMatchObject({ profile_handle: renamed });
    // The old handle can be taken by a new account.
    await sys.signUp({ ...newUser('taker'), handle: user.handle });
  });

  it('stores an uploaded picture, checked by its bytes, and serves it back', async () => {
    const user = await sys.signUp();
    const { payload, headers } = multipart({}, { field: 'profPic', name: 'me.png', bytes: PNG, type: 'image/png' });
    const res = await sys.request('POST', '/api/profile/edit/', { user, payload, headers });
    expect(res.body).toEqual({ status: 200, message: 'data has been successfully updated', updated_fields: ['profPic'] });
    const edit = await sys.get(`/api/profile/${user.handle}/edit/`, user);
    const profPic = edit.body.profPic as string;
    expect(profPic).toMatch(/^\/media\/uploads\/[0-9a-f]{32}\.png$/);
    const served = await sys.get(profPic);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
  });

  it('refuses a file that is not an image whatever its name says', async () => {
    const user = await sys.signUp();
    const { payload, headers } = multipart({ city: 'Nice' }, { field: 'profPic', name: 'me.png', bytes: Buffer.from('#!/bin/sh\necho hi\n'), type: 'image/png' });
    const res = await sys.request('POST', '/api/profile/edit/', { user, payload, headers });
    expect(res.body).toEqual({ status: 400, error_type: 'invalid_request', error_message: 'Images must be in .jpg, .jpeg, .gif, .png format.' });
    // Nothing else was saved either.
    expect((await sys.get(`/api/profile/${user.handle}/edit/`, user)).body).toMatchObject({ city: '' });
  });

  it('refuses an image over 5 MB with a clear error', async () => {
    const user = await sys.signUp();
    const big = Buffer.concat([PNG, Buffer.alloc(6 * 1024 * 1024)]);
    const { payload, headers } = multipart({}, { field: 'profPic', name: 'big.png', bytes: big, type: 'image/png' });
    const res = await sys.request('POST', '/api/profile/edit/', { user, payload, headers });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error_type: 'invalid_request', error_message: 'images must be at most 5 MB' });
  });

  it('keeps no file from a request that was refused or not authenticated', async () => {
    const uploads = async () => (await readdir(join(sys.dataDir, 'media', 'uploads')).catch(() => [] as string[])).filter((f) => !f.startsWith('.')).length;
    const other = await sys.signUp();
    const user = await sys.signUp();
    const before = await uploads();
    const png = () => multipart({ handle: other.handle }, { field: 'profPic', name: 'me.png', bytes: PNG, type: 'image/png' });
    // Wrong password with HTTP Basic: refused before the body is read.
    const wrong = await sys.request('POST', '/api/profile/edit/', { user: { ...user, password: 'wrong' }, ...png() });
    expect(wrong.status).toBe(401);
    // Credentials in the multipart body, wrong: the file read to find them is dropped.
    const inBody = multipart({ username: user.email, password: 'wrong' }, { field: 'profPic', name: 'me.png', bytes: PNG, type: 'image/png' });
    expect((await sys.request('POST', '/api/profile/edit/', inBody)).status).toBe(401);
    // Authenticated but refused (the handle is taken): the picture goes too.
    expect((await sys.request('POST', '/api/profile/edit/', { user, ...png() })).body.error_type).toBe('handle_not_unique');
    expect(await uploads()).toBe(before);
  });

  it('takes a picture at the last sign-up step', async () => {
    const user = newUser('pic');
    await sys.post('/api/signup/password/', { email: user.email, password: user.password });
    await sys.post('/api/signup/handle/', { email: user.email, handle: user.handle, first_name: 'P', last_name: 'Q' });
    const { payload, headers } = multipart({ email: user.email, handle: user.handle }, { field: 'profPic', name: 'p.gif', bytes: Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), type: 'image/gif' });
    const res = await sys.request('POST', '/api/signup/picture/', { payload, headers });
    expect(res.body).toMatchObject({ status: 200, handle: user.handle });
    expect((await sys.get(`/api/profile/${user.handle}/edit/`, user)).body.profPic).toMatch(/\.gif$/);
  });
});

describe('account deletion through the gateway', () => {
  it('deletes one own account: credentials stop, e-mail is freed, handle stays reserved', async () => {
    const user = await sys.signUp();
    const res = await sys.post(`/api/profile/${user.handle}/delete/`, {}, user);
    expect(res.body).toEqual({ status: 200, handle_deleted: user.handle, message: 'Account has been deleted' });
    expect((await sys.get('/api/preferences/', user)).status).toBe(401);
    expect((await sys.post('/api/signup/email/', { email: user.email })).status).toBe(200);
    const reuse = newUser('reuse');
    await sys.post('/api/signup/password/', { email: reuse.email, password: reuse.password });
    expect((await sys.post('/api/signup/handle/', { email: reuse.email, handle: user.handle, first_name: 'R', last_name: 'U' })).body.error_type).toBe('handle_not_unique');
  });

  it("refuses to delete someone else's account, and 400 object_not_found for an unknown handle", async () => {
    const other = await sys.signUp();
    const user = await sys.signUp();
    expect((await sys.post(`/api/profile/${other.handle}/delete/`, {}, user)).body.error_type).toBe('not_allowed');
    expect((await sys.get('/api/preferences/', other)).status).toBe(200);
    const unknown = await sys.post('/api/profile/nobodyhere/delete/', {}, user);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error_type: 'object_not_found', error_message: 'the requested user could not be found' });
  });
});
