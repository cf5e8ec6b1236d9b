import { ErrorBodySchema } from '@castie/contracts';
import { newUser, TestSystem } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start({ env: { CLOCK: 'manual' } });
});
afterAll(() => sys.close());

describe('gateway: credentials', () => {
  it('accepts HTTP Basic and username/password form fields, and JSON bodies', async () => {
    const user = await sys.signUp();
    expect((await sys.get('/api/preferences/', user)).status).toBe(200);
    expect((await sys.post('/api/preferences/', { username: user.email, password: user.password, is_private: 'true' })).body).toMatchObject({ status: 200, is_private: true });
    const json = await sys.request('POST', '/api/preferences/', { json: { username: user.email, password: user.password, is_private: false } });
    expect(json.body).toMatchObject({ status: 200, is_private: false });
  });

  it('accepts credentials in the form body of a GET', async () => {
    const user = await sys.signUp();
    const res = await sys.request('GET', '/api/preferences/', { form: { username: user.email, password: user.password } });
    expect(res.body).toEqual({ status: 200, is_private: false });
  });

  it('answers 401 authentication_failed for wrong, missing or unknown credentials', async () => {
    const user = await sys.signUp();
    for (const res of [await sys.get('/api/preferences/', { ...user, password: 'wrong' }), await sys.get('/api/preferences/'), await sys.get('/api/preferences/', newUser())]) {
      expect(res.status).toBe(401);
      expect(ErrorBodySchema.parse(res.body)).toMatchObject({ status: 401, error_type: 'authentication_failed' });
    }
  });
});

describe('gateway: the envelope and routing', () => {
  it('works with and without the trailing slash', async () => {
    const user = await sys.signUp();
    expect((await sys.get('/api/preferences', user)).status).toBe(200);
    expect((await sys.get('/api/preferences/', user)).status).toBe(200);
    expect((await sys.post('/api/signup/email', { email: newUser().email })).status).toBe(200);
  });

  it('answers 400 incorrect_request_type for a wrong method on a known path', async () => {
    const res = await sys.get('/api/signup/email/');
    expect(res.status).toBe(400);
    expect(ErrorBodySchema.parse(res.body)).toMatchObject({ error_type: 'incorrect_request_type' });
    expect((await sys.request('DELETE', '/api/preferences/')).body.error_type).toBe('incorrect_request_type');
  });

  it('answers 404 not_found for an unknown route', async () => {
    const res = await sys.get('/api/no/such/thing/');
    expect(res.status).toBe(404);
    expect(ErrorBodySchema.parse(res.body)).toMatchObject({ status: 404, error_type: 'not_found' });
  });

  it('answers malformed bodies with 400, never 500', async () => {
    const res = await sys.request('POST', '/api/signup/email/', { payload: '{"email":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.error_type).toBe('missing_request_data');
    const odd = await sys.request('POST', '/api/signup/email/', { payload: 'email=x', headers: { 'content-type': 'text/x-unknown' } });
    expect(odd.status).toBe(400);
  });

  it('names a missing search text and refuses a cursor it did not hand out', async () => {
    const user = await sys.signUp();
    for (const kind of ['people', 'groups', 'casties']) {
      const res = await sys.get(`/api/search/${kind}/`, user);
      expect(res.status, kind).toBe(400);
      expect(res.body).toMatchObject({ error_type: 'missing_request_data', error_message: 'q is required' });
      expect((await sys.get(`/api/search/${kind}/?q=`, user)).status, kind).toBe(200);
    }
    const bad = await sys.get('/api/home/spicy/?before=garbage', user);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error_type: 'missing_request_data', error_message: 'before must be the next_before of a previous page' });
  });

  it('answers a URL that cannot be decoded in the envelope', async () => {
    const res = await sys.get('/api/casties/%E0%A4%A/');
    expect(res.status).toBe(400);
    expect(ErrorBodySchema.parse(res.body)).toMatchObject({ status: 400, error_type: 'missing_request_data' });
  });
});

describe('gateway: login', () => {
  it('returns the profile handle and records the sign-in', async () => {
    const user = await sys.signUp();
    const res = await sys.post('/api/login/', { last_seen_date: '2026-02-28', last_seen_time: '10:11:12' }, user);
    expect(res.body).toEqual({ status: 200, profile_handle: user.handle, number_notifications: 0, needs_answer: false, number_needing_answer: 0 });
    expect((await sys.post('/api/login/', { last_seen_date: 'yesterday', last_seen_time: '10:11:12' }, user)).body.error_type).toBe('missing_request_data');
  });
});

describe('gateway: admin API', () => {
  it('needs the bearer token', async () => {
    const res = await sys.request('POST', '/admin/clock/', { json: { advance_seconds: 60 } });
    expect(res.status).toBe(401);
    expect(res.body.error_type).toBe('authorization_failed');
  });

  it('moves the manual clock forward', async () => {
    const before = sys.clock.now().getTime();
    const res = await sys.admin('POST', '/admin/clock/', { advance_seconds: 3600 });
    expect(res.status).toBe(200);
    expect(Date.parse(res.body.now as string) - before).toBe(3600_000);
    expect((await sys.admin('POST', '/admin/clock/', { advance_seconds: -5 })).status).toBe(400);
  });
});

describe('gateway: API keys', () => {
  it('needs a valid Api-Key on /api/ when keys are configured', async () => {
    const keyed = await TestSystem.start({ env: { API_KEYS: 'k-one,k-two' } });
    try {
      const without = await keyed.post('/api/signup/email/', { email: newUser().email });
      expect(without.status).toBe(401);
      expect(without.body.error_type).toBe('authorization_failed');
      const wrong = await keyed.request('POST', '/api/signup/email/', { form: { email: newUser().email }, headers: { 'api-key': 'nope' } });
      expect(wrong.status).toBe(401);
      const right = await keyed.request('POST', '/api/signup/email/', { form: { email: newUser().email }, headers: { 'api-key': 'k-two' } });
      expect(right.status).toBe(200);
    } finally {
      await keyed.close();
    }
  });

  it('the clock route does not exist without CLOCK=manual', async () => {
    const plain = await TestSystem.start();
    try {
      expect((await plain.admin('POST', '/admin/clock/', { advance_seconds: 1 })).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe('gateway: API documentation', () => {
  it('serves an OpenAPI document generated from the contracts, covering every public endpoint', async () => {
    const { allEndpoints } = await import('@castie/contracts');
    const res = await sys.get('/docs/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const paths = res.body.paths as Record<string, Record<string, unknown>>;
    for (const e of allEndpoints) for (const p of e.paths) expect(paths[p.replace(/:([A-Za-z_]+)/g, '{$1}')]?.[e.method.toLowerCase()], `${e.method} ${p}`).toBeDefined();
    expect((await sys.get('/docs')).text).toContain('/api/signup/email/');
  });
});
