import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup } from '../../testing/helpers.ts';
import { multipart, newUser, PNG, TestSystem, type TestUser } from '../../testing/harness.ts';

// HEAD works wherever GET does (monitors, link checkers, caches): the same status and headers,
// no body.
let sys: TestSystem;
let ada: TestUser;
let picture: string;
let resetLink: string;
let slug: string;

beforeAll(async () => {
  sys = await TestSystem.start();
  ada = await sys.signUp(newUser('head'));
  slug = await createGroup(sys);
  const upload = multipart({ handle: ada.handle }, { field: 'profPic', name: 'me.png', bytes: PNG, type: 'image/png' });
  await sys.request('POST', '/api/profile/edit/', { user: ada, payload: upload.payload, headers: upload.headers });
  picture = String((await sys.get(`/api/profile/${ada.handle}/edit/`, ada)).body.profPic);
  await sys.post('/password_reset/', { email: ada.email });
  const dir = join(sys.dataDir, 'outbox');
  const [file] = (await readdir(dir)).filter((f) => !f.startsWith('.'));
  const mail = JSON.parse(await readFile(join(dir, file!), 'utf8')) as { text: string };
  resetLink = /http:\/\/[^/]+(\/password_reset\/[A-Za-z0-9_-]+\/)/.exec(mail.text)![1]!;
});
afterAll(() => sys.close());

describe('HEAD answers as GET does, without a body', () => {
  it('on every kind of GET the gateway answers: API, media, docs, admin, password-reset pages, unknown paths', async () => {
    const admin = { authorization: `Bearer ${sys.adminToken}` };
    const cases: [string, { user?: TestUser; headers?: Record<string, string> }][] = [
      ['/api/preferences/', { user: ada }],
      ['/api/preferences/', {}],
      ['/api/groups/', { user: ada }],
      [picture, {}],
      ['/media/uploads/no-such-picture.png', {}],
      ['/docs', {}],
      ['/docs/openapi.json', {}],
      [`/admin/groups/${slug}/`, { headers: admin }],
      ['/admin/groups/', { headers: admin }],
      ['/admin/groups/', {}],
      ['/password_reset/', {}],
      [resetLink, {}],
      ['/password_reset/not-a-real-token/', {}],
      ['/no/such/page', {}],
    ];
    for (const [url, options] of cases) {
      const get = await sys.request('GET', url, options);
      const head = await sys.request('HEAD', url, options);
      expect(head.status, `HEAD ${url}`).toBe(get.status);
      expect(head.text, `HEAD ${url}`).toBe('');
      expect(head.headers['content-type'], `HEAD ${url}`).toBe(get.headers['content-type']);
    }
  });

  it('the answers that exist are 2xx: media, docs and the reset pages are served to HEAD', async () => {
    for (const url of [picture, '/docs', '/docs/openapi.json', '/password_reset/', resetLink]) expect((await sys.request('HEAD', url)).status, url).toBe(200);
  });

  it('over a real connection, a HEAD answer ends without a body', async () => {
    await sys.system.gateway.listen({ port: 0, host: '127.0.0.1' });
    const { port } = sys.system.gateway.server.address() as { port: number };
    for (const url of ['/docs/openapi.json', picture, '/api/groups/']) {
      const res = await fetch(`http://127.0.0.1:${port}${url}`, { method: 'HEAD', headers: { 'accept-encoding': 'gzip', authorization: `Basic ${Buffer.from(`${ada.email}:${ada.password}`).toString('base64')}` } });
      expect(res.status, url).toBe(200);
      expect(await res.text()).toBe('');
    }
  });
});
