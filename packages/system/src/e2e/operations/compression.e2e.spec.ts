import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup } from '../../testing/helpers.ts';
import { addressOf, basic, multipart, newUser, PNG, TestSystem, type TestUser } from '../../testing/harness.ts';

// Clients that send Accept-Encoding get brotli or gzip answers (1 KiB and up) that decode to
// exactly the plain answer; small answers and pictures go as they are.
let sys: TestSystem;
let ada: TestUser;
let picture: string;

beforeAll(async () => {
  sys = await TestSystem.start();
  ada = await sys.signUp(newUser('zip'));
  for (let i = 0; i < 3; i++) await createGroup(sys, { groupInfoText: `A group about forecasting things, number ${i}. `.repeat(30) });
  const upload = multipart({ handle: ada.handle }, { field: 'profPic', name: 'me.png', bytes: PNG, type: 'image/png' });
  await sys.request('POST', '/api/profile/edit/', { user: ada, payload: upload.payload, headers: upload.headers });
  picture = String((await sys.get(`/api/profile/${ada.handle}/edit/`, ada)).body.profPic);
});
afterAll(() => sys.close());

/** The raw answer, bytes as sent. */
async function fetchRaw(method: 'GET' | 'HEAD', url: string, acceptEncoding?: string, user?: TestUser) {
  const headers: Record<string, string> = {};
  if (acceptEncoding) headers['accept-encoding'] = acceptEncoding;
  if (user) headers.authorization = basic(user);
  const res = await sys.system.gateway.inject({ method, url, headers, remoteAddress: user ? addressOf(user.email) : '127.0.0.1' });
  return { status: res.statusCode, headers: res.headers, bytes: res.rawPayload };
}

const decoders = { gzip: gunzipSync, br: brotliDecompressSync } as const;

describe('compressed answers', () => {
  it('a forwarded JSON answer and the OpenAPI document decode to the same JSON in gzip and brotli', async () => {
    for (const url of ['/api/groups/', '/docs/openapi.json']) {
      const plain = await fetchRaw('GET', url, undefined, ada);
      expect(plain.status).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.bytes.length).toBeGreaterThan(1024);
      const json = JSON.parse(plain.bytes.toString('utf8')) as unknown;
      for (const encoding of ['gzip', 'br'] as const) {
        const res = await fetchRaw('GET', url, encoding === 'br' ? 'br, gzip;q=0.8' : 'gzip, deflate', ada);
        expect(res.status).toBe(200);
        expect(res.headers['content-encoding'], `${url} ${encoding}`).toBe(encoding);
        expect(String(res.headers.vary).toLowerCase()).toContain('accept-encoding');
        expect(res.bytes.length).toBeLessThan(plain.bytes.length);
        expect(JSON.parse(decoders[encoding](res.bytes).toString('utf8'))).toEqual(json);
      }
    }
  });

  it('HTML pages are compressed too', async () => {
    const res = await fetchRaw('GET', '/docs', 'gzip');
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(res.bytes).toString('utf8')).toContain('<html');
  });

  it('leaves small answers, pictures and clients that do not ask as they are', async () => {
    const small = await fetchRaw('GET', '/api/preferences/', 'gzip, br', ada);
    expect(small.status).toBe(200);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.bytes.toString('utf8'))).toMatchObject({ status: 200 });

    expect(picture).toMatch(/^\/media\//);
    const image = await fetchRaw('GET', picture, 'gzip, br');
    expect(image.status).toBe(200);
    expect(image.headers['content-encoding']).toBeUndefined();
    expect(image.bytes.equals(PNG)).toBe(true);

    const identity = await fetchRaw('GET', '/api/groups/', 'identity', ada);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(identity.bytes.toString('utf8'))).toMatchObject({ status: 200 });
  });

  it('HEAD with Accept-Encoding answers like GET, without a body', async () => {
    const res = await fetchRaw('HEAD', '/api/groups/', 'gzip', ada);
    expect(res.status).toBe(200);
    expect(res.bytes.length).toBe(0);
  });

  it('follows the preferences the client states: q-values, refusals, no preference and x-gzip', async () => {
    const plain = JSON.parse((await fetchRaw('GET', '/api/groups/', undefined, ada)).bytes.toString('utf8')) as unknown;
    const cases: [string, keyof typeof decoders | undefined][] = [
      ['gzip;q=1.0, br;q=0.5', 'gzip'],
      ['br;q=0.2, gzip;q=0.9', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['gzip;q=0, br', 'br'],
      ['*', 'gzip'],
      ['x-gzip', 'gzip'],
      ['GZIP', 'gzip'],
      ['deflate', undefined],
      ['br;q=0, gzip;q=0', undefined],
      ['compress, identity', undefined],
    ];
    for (const [accepted, encoding] of cases) {
      const res = await fetchRaw('GET', '/api/groups/', accepted, ada);
      expect(res.status, accepted).toBe(200);
      expect(res.headers['content-encoding'], accepted).toBe(encoding);
      expect(JSON.parse((encoding ? decoders[encoding](res.bytes) : res.bytes).toString('utf8')), accepted).toEqual(plain);
    }
  });

  it('compresses an answer sent as a stream (the own-data export) as well', async () => {
    const plain = await fetchRaw('GET', '/api/export/', undefined, ada);
    expect(plain.status).toBe(200);
    const expected = JSON.parse(plain.bytes.toString('utf8')) as { exported_at?: unknown };
    for (const encoding of ['gzip', 'br'] as const) {
      const res = await fetchRaw('GET', '/api/export/', encoding, ada);
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe(encoding);
      const decoded = JSON.parse(decoders[encoding](res.bytes).toString('utf8')) as { exported_at?: unknown };
      expect({ ...decoded, exported_at: null }).toEqual({ ...expected, exported_at: null });
    }
  });

  it('answers several compressed pages at once, each decoding to its own answer', async () => {
    const urls = ['/api/groups/', '/docs/openapi.json', '/docs', '/api/preferences/'];
    const plain = await Promise.all(urls.map(async (url) => (await fetchRaw('GET', url, undefined, ada)).bytes.toString('utf8')));
    const compressed = await Promise.all([...urls, ...urls].map((url, i) => fetchRaw('GET', url, i % 2 ? 'br' : 'gzip', ada)));
    compressed.forEach((res, i) => {
      const encoding = i % 2 ? 'br' : 'gzip';
      if (res.headers['content-encoding'] === undefined) expect(res.bytes.length, urls[i % urls.length]).toBeLessThan(1024);
      else expect(decoders[encoding](res.bytes).toString('utf8'), urls[i % urls.length]).toBe(plain[i % urls.length]);
    });
  });
});
