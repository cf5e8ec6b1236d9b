import { multipart, newUser, PNG, TestSystem, type TestUser } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

/** Signs up with a picture (multipart, as the app does) and returns the user and their picture's path. */
async function signUpWithPicture(): Promise<{ user: TestUser; profPic: string }> {
  const user = newUser('pic');
  await sys.post('/api/signup/email/', { email: user.email });
  await sys.post('/api/signup/password/', { email: user.email, password: user.password });
  await sys.post('/api/signup/handle/', { email: user.email, handle: user.handle, first_name: user.firstName, last_name: user.lastName });
  const { payload, headers } = multipart({ email: user.email, handle: user.handle }, { field: 'profPic', name: 'me.png', bytes: PNG, type: 'image/png' });
  expect((await sys.request('POST', '/api/signup/picture/', { payload, headers })).status).toBe(200);
  const edit = await sys.get(`/api/profile/${user.handle}/edit/`, user);
  const profPic = edit.body.profPic as string;
  expect(profPic).toMatch(/^\/media\/uploads\//);
  return { user, profPic };
}

/** What a forger sends: the gateway's internal upload object, naming someone else's stored file. */
const forgedRef = (profPic: string) => ({ upload: true, key: profPic.replace(/^\/media\//, ''), contentType: 'image/png', size: PNG.length });

describe('uploads: a stored file is reachable only through a file this request brought', () => {
  it("refuses another user's stored file as one's own picture in a JSON profile edit", async () => {
    const victim = await signUpWithPicture();
    const forger = await sys.signUp();
    const res = await sys.request('POST', '/api/profile/edit/', { user: forger, json: { handle: forger.handle, profPic: forgedRef(victim.profPic) } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 400, error_type: 'missing_request_data' });
    expect((await sys.get(`/api/profile/${forger.handle}/edit/`, forger)).body.profPic).toBe('');
    expect((await sys.get(victim.profPic)).status).toBe(200);
  });

  it("does not delete another user's picture when an unauthenticated sign-up step carrying its key is refused", async () => {
    const victim = await signUpWithPicture();
    const stranger = newUser('stranger');
    const res = await sys.request('POST', '/api/signup/picture/', { json: { email: stranger.email, handle: stranger.handle, profPic: forgedRef(victim.profPic) } });
    expect(res.status).toBe(400);
    expect((await sys.get(victim.profPic)).status).toBe(200);
    // The same through a refused authenticated edit (a taken handle) and a multipart text field.
    const forger = await sys.signUp();
    const taken = await sys.request('POST', '/api/profile/edit/', { user: forger, json: { handle: victim.user.handle, profPic: forgedRef(victim.profPic) } });
    expect(taken.status).toBe(400);
    const { payload, headers } = multipart({ handle: forger.handle, profPic: JSON.stringify(forgedRef(victim.profPic)) });
    const asText = await sys.request('POST', '/api/profile/edit/', { user: forger, payload, headers });
    expect(asText.status).toBe(400);
    expect((await sys.get(victim.profPic)).status).toBe(200);
  });

  it('refuses a stored-file reference as a group icon in the admin API too', async () => {
    const victim = await signUpWithPicture();
    const res = await sys.admin('POST', '/admin/groups/', { slug: 'forgedicon', groupName: 'Forged', groupInfoText: 'x', requiresApproval: false, accessDeniedMessage: '', groupIcon: forgedRef(victim.profPic) });
    expect(res.status).toBe(400);
    expect((await sys.get(victim.profPic)).status).toBe(200);
  });

  it('still treats an empty picture value as no picture, in every body encoding', async () => {
    const user = await sys.signUp();
    const res = await sys.request('POST', '/api/profile/edit/', { user, json: { city: 'Oslo', profPic: '' } });
    expect(res.body).toMatchObject({ status: 200, updated_fields: ['city'] });
    expect((await sys.post('/api/profile/edit/', { city: 'Bergen', profPic: '' }, user)).body).toMatchObject({ status: 200, updated_fields: ['city'] });
  });

  it('deletes only the file it stored itself when the request is refused', async () => {
    const victim = await signUpWithPicture();
    const forger = await sys.signUp();
    // A valid file and a taken handle: refused, so the forger's own new file is removed ...
    const { payload, headers } = multipart({ handle: victim.user.handle }, { field: 'profPic', name: 'x.png', bytes: PNG, type: 'image/png' });
    const res = await sys.request('POST', '/api/profile/edit/', { user: forger, payload, headers });
    expect(res.body).toMatchObject({ status: 400, error_type: 'handle_not_unique' });
    // ... and the victim's stays.
    expect((await sys.get(victim.profPic)).status).toBe(200);
  });

  it('documents upload fields as files only: the JSON form of the OpenAPI document has none', async () => {
    const doc = (await sys.get('/docs/openapi.json')).body as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } }>> };
    for (const path of ['/api/profile/edit', '/api/signup/picture/']) {
      const op = doc.paths[path]?.post ?? doc.paths[`${path}/`]?.post;
      expect(op, path).toBeDefined();
      expect(Object.keys(op!.requestBody!.content['application/json']!.schema.properties ?? {})).not.toContain('profPic');
      expect(op!.requestBody!.content['multipart/form-data']!.schema.properties?.profPic).toMatchObject({ type: 'string', format: 'binary' });
      // Picture edits also come form-urlencoded (text fields only).
      expect(op!.requestBody!.content['application/x-www-form-urlencoded']).toBeDefined();
    }
  });
});
