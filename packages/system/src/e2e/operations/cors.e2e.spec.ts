import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readClusterConfig } from '../../cluster-config.ts';
import { readEmbeddedConfig } from '../../config.ts';
import { newUser, TestSystem, type TestUser } from '../../testing/harness.ts';

// Browser clients: only the origins in CORS_ORIGINS may call the API from a page; a preflight
// from one of them is answered 204 before routing and credentials, any other origin gets no
// CORS headers at all (the browser then refuses), and without CORS_ORIGINS no origin is allowed.
const APP = 'https://app.example.com';
const DEV = 'http://localhost:5173';

const preflight = (origin: string, method = 'POST', headers = 'authorization,content-type') => ({
  origin,
  'access-control-request-method': method,
  'access-control-request-headers': headers,
});

describe('CORS_ORIGINS set', () => {
  let sys: TestSystem;
  let ada: TestUser;
  beforeAll(async () => {
    sys = await TestSystem.start({ env: { CORS_ORIGINS: `${APP}, ${DEV}` } });
    ada = await sys.signUp(newUser('cors'));
  });
  afterAll(() => sys.close());

  it('answers a preflight from an allowed origin with 204 and what the browser needs', async () => {
    for (const [origin, url] of [[APP, '/api/preferences/'], [DEV, '/api/casties/create/'], [APP, '/api/signup/email/'], [APP, '/admin/groups/'], [APP, '/media/uploads/x.png']] as const) {
      const res = await sys.request('OPTIONS', url, { headers: preflight(origin) });
      expect(res.status, url).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(String(res.headers['access-control-allow-methods']).split(/,\s*/)).toEqual(expect.arrayContaining(['GET', 'HEAD', 'POST']));
      const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'api-key', 'x-request-id']));
      expect(String(res.headers.vary).toLowerCase()).toContain('origin');
      expect(res.headers['x-request-id']).toBeTruthy();
    }
  });

  it('lets an allowed origin read the answer and the headers it needs', async () => {
    const res = await sys.request('GET', '/api/preferences/', { user: ada, headers: { origin: APP } });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(String(res.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/)).toEqual(expect.arrayContaining(['x-request-id', 'retry-after']));
    // Errors too: the page must be able to read why it was refused.
    const refused = await sys.request('GET', '/api/preferences/', { headers: { origin: APP } });
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(APP);
  });

  it('gives any other origin no CORS headers, and no 500', async () => {
    for (const origin of ['https://evil.example.com', 'https://app.example.com.evil.com', 'http://app.example.com', 'null']) {
      const pre = await sys.request('OPTIONS', '/api/preferences/', { headers: preflight(origin) });
      expect(pre.status).toBeLessThan(500);
      expect(pre.status).not.toBe(204);
      expect(pre.headers['access-control-allow-origin'], origin).toBeUndefined();
      expect(pre.headers['access-control-allow-methods']).toBeUndefined();
      const get = await sys.request('GET', '/api/preferences/', { user: ada, headers: { origin } });
      expect(get.status).toBe(200);
      expect(get.headers['access-control-allow-origin'], origin).toBeUndefined();
    }
  });

  it('answers an OPTIONS that is no preflight as before: incorrect_request_type', async () => {
    const res = await sys.request('OPTIONS', '/api/preferences/', { headers: { origin: APP } });
    expect(res.status).toBe(400);
    expect(res.body.error_type).toBe('incorrect_request_type');
    expect((await sys.request('OPTIONS', '/api/preferences/')).body.error_type).toBe('incorrect_request_type');
  });
});

describe('CORS_ORIGINS unset', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await TestSystem.start();
  });
  afterAll(() => sys.close());

  it('allows no origin at all', async () => {
    const pre = await sys.request('OPTIONS', '/api/preferences/', { headers: preflight(APP) });
    expect(pre.status).toBeLessThan(500);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const get = await sys.request('GET', '/api/casties/search/?q=x', { headers: { origin: APP } });
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('CORS_ORIGINS is checked at start', () => {
  const cluster = { MONGO_URL: 'mongodb://mongo:27017', REDIS_URL: 'redis://redis:6379', SECRET: 's'.repeat(32), ADMIN_TOKEN: 'a'.repeat(24), PUBLIC_URL: 'https://castie.example.com', IDENTITY_URL: 'http://identity:8080', GROUPS_URL: 'http://groups:8080', CASTIES_URL: 'http://casties:8080', SOCIAL_URL: 'http://social:8080', NOTIFICATIONS_URL: 'http://notifications:8080' };
  const services = ['identity', 'groups', 'casties', 'social', 'notifications'] as const;

  it('accepts a list of origins, in both profiles', () => {
    expect(readEmbeddedConfig({ CORS_ORIGINS: `${APP},${DEV}, https://castie.example.com:8443` }).CORS_ORIGINS).toEqual([APP, DEV, 'https://castie.example.com:8443']);
    expect(readEmbeddedConfig({}).CORS_ORIGINS).toEqual([]);
    expect(readClusterConfig('gateway', { ...cluster, CORS_ORIGINS: APP }, services).CORS_ORIGINS).toEqual([APP]);
  });

  it('refuses an entry that is not an origin, naming it', () => {
    for (const bad of ['app.example.com', 'https://app.example.com/', 'https://app.example.com/path', 'ftp://files.example.com', '*', 'https://*.example.com']) {
      expect(() => readEmbeddedConfig({ CORS_ORIGINS: `${APP},${bad}` }), bad).toThrow(/CORS_ORIGINS/);
      expect(() => readClusterConfig('gateway', { ...cluster, CORS_ORIGINS: bad }, services), bad).toThrow(/CORS_ORIGINS/);
    }
  });
});
