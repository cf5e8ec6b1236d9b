import type { DocumentStore } from '@castie/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogger, newUser, PNG, multipart, TestSystem, type CapturedLog, type TestUser } from '../../testing/harness.ts';

// Every answer names its request (x-request-id): the client's own id when acceptable, else a
// fresh UUID; the gateway and the services it reaches log that request under that one id (the
// services in process at debug: the gateway's line is the request's one line at info).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** While set, the groups service's reads fail (as a broken disk would make them). */
let failGroupReads = false;
/** The store, with `find` of every collection refused while `failGroupReads` is set. */
function failingReads(store: DocumentStore): DocumentStore {
  const bound = <T extends object>(target: T, name: string | symbol): unknown => {
    const value: unknown = Reflect.get(target, name);
    return typeof value === 'function' ? value.bind(target) : value;
  };
  return new Proxy(store, {
    get(target, name) {
      if (name !== 'collection') return bound(target, name);
      return (...args: Parameters<DocumentStore['collection']>) =>
        new Proxy(target.collection(...args), {
          get: (collection, method) => (method === 'find' && failGroupReads ? () => Promise.reject(new Error('the disk failed')) : bound(collection, method)),
        });
    },
  });
}

let sys: TestSystem;
let log: CapturedLog;
let ada: TestUser;
let picture: string;
beforeAll(async () => {
  log = capturedLogger('debug');
  sys = await TestSystem.start({ logger: log.logger, wrapDocuments: (service, store) => (service === 'groups' ? failingReads(store) : store) });
  ada = await sys.signUp(newUser('ids'));
  const upload = multipart({ email: ada.email, handle: ada.handle }, { field: 'profPic', name: 'me.png', bytes: PNG, type: 'image/png' });
  const edited = await sys.request('POST', '/api/profile/edit/', { user: ada, payload: upload.payload, headers: upload.headers });
  picture = String((await sys.get(`/api/profile/${ada.handle}/edit/`, ada)).body.profPic ?? '');
  if (edited.status !== 200 || !picture.startsWith('/media/')) throw new Error(`no picture stored: ${edited.text}`);
});
afterAll(() => sys.close());

const idOf = (res: { headers: Record<string, unknown> }) => res.headers['x-request-id'];

describe('x-request-id', () => {
  it('echoes an acceptable id the client sent', async () => {
    const res = await sys.request('GET', '/api/preferences/', { user: ada, headers: { 'x-request-id': 'client-42:retry.1_A' } });
    expect(res.status).toBe(200);
    expect(idOf(res)).toBe('client-42:retry.1_A');
  });

  it('replaces an id that is too long or carries unsafe characters with a UUID', async () => {
    for (const sent of ['x'.repeat(129), 'two words', 'line\\nbreak', '{"json":1}', '']) {
      const res = await sys.request('GET', '/api/preferences/', { user: ada, headers: { 'x-request-id': sent } });
      expect(res.status).toBe(200);
      expect(idOf(res), JSON.stringify(sent)).toMatch(UUID);
    }
    expect(idOf(await sys.request('GET', '/api/preferences/', { user: ada, headers: { 'x-request-id': 'y'.repeat(128) } }))).toBe('y'.repeat(128));
  });

  it('generates a different UUID for each request that sent none', async () => {
    const a = idOf(await sys.get('/api/preferences/', ada));
    const b = idOf(await sys.get('/api/preferences/', ada));
    expect(a).toMatch(UUID);
    expect(b).toMatch(UUID);
    expect(a).not.toBe(b);
  });

  it('is on every kind of answer: errors, 404, 429, admin, media, docs, pages, preflight-less OPTIONS', async () => {
    const answers = {
      'refused credentials': await sys.get('/api/preferences/', { ...ada, password: 'not-it' }),
      'unknown endpoint': await sys.get('/api/no-such-thing/'),
      'wrong method': await sys.request('PUT', '/api/preferences/'),
      'OPTIONS': await sys.request('OPTIONS', '/api/preferences/'),
      'admin without token': await sys.request('GET', '/admin/groups/'),
      'admin': await sys.admin('GET', '/admin/groups/no-such-group/'),
      'media': await sys.get(picture),
      'missing media': await sys.get('/media/no/such.png'),
      'docs': await sys.get('/docs'),
      'OpenAPI': await sys.get('/docs/openapi.json'),
      'reset page': await sys.get('/password_reset/'),
      'malformed path': await sys.get('/api/%E0%A4%A/'),
    };
    for (const [what, res] of Object.entries(answers)) expect(String(idOf(res)), what).toMatch(UUID);
  });

  it('is on the 429 of a locked account', async () => {
    const eve = await sys.signUp(newUser('locked'));
    let res;
    for (let i = 0; i < 8; i++) res = await sys.request('GET', '/api/preferences/', { user: { ...eve, password: 'wrong-one' }, headers: { 'x-request-id': `attempt-${i}` } });
    expect(res!.status).toBe(429);
    expect(idOf(res!)).toBe('attempt-7');
  });

  it('names the request in the log lines of the gateway and of every service it reached', async () => {
    // A new user's first request: the gateway has their credentials checked by identity.
    const bea = await sys.signUp(newUser('trace'));
    const res = await sys.request('GET', '/api/preferences/', { user: bea, headers: { 'x-request-id': 'trace-me-1' } });
    expect(res.status).toBe(200);
    const lines = log.lines().filter((l) => l.reqId === 'trace-me-1');
    // The gateway's own lines, and identity's: the credentials check and the answer itself.
    expect(lines.some((l) => l.service === undefined && l.msg === 'request completed')).toBe(true);
    const identity = lines.filter((l) => l.service === 'identity');
    expect(identity.map((l) => (l.req as { url?: string } | undefined)?.url).filter(Boolean)).toEqual(expect.arrayContaining(['/internal/authenticate', '/api/preferences/']));
    expect(identity.some((l) => l.msg === 'request completed')).toBe(true);
  });

  it('logs each request once at info, when answered, with its URL, status and time; the services it reached in process at debug', async () => {
    const cy = await sys.signUp(newUser('line'));
    const res = await sys.request('GET', '/api/preferences/?x=1', { user: cy, headers: { 'x-request-id': 'one-line-1' } });
    expect(res.status).toBe(200);
    const lines = log.lines().filter((l) => l.reqId === 'one-line-1');
    expect(lines.filter((l) => l.msg === 'incoming request')).toEqual([]);
    const info = lines.filter((l) => Number(l.level) >= 30);
    expect(info).toHaveLength(1);
    expect(info[0]).toMatchObject({ msg: 'request completed', req: { method: 'GET', url: '/api/preferences/?x=1' }, res: { statusCode: 200 } });
    expect(info[0]!.service).toBeUndefined();
    expect(typeof info[0]!.responseTime).toBe('number');
    // identity, at debug: the credentials check, then the answer.
    expect(lines.filter((l) => l.service === 'identity').map((l) => [l.level, l.msg, (l.req as { url?: string }).url])).toEqual([
      [20, 'request completed', '/internal/authenticate'],
      [20, 'request completed', '/api/preferences/?x=1'],
    ]);
  });

  it('logs a failure of a service it reached in process at error level', async () => {
    failGroupReads = true;
    try {
      expect((await sys.request('GET', '/api/groups/', { user: ada, headers: { 'x-request-id': 'errored-1' } })).status).toBe(500);
    } finally {
      failGroupReads = false;
    }
    const lines = log.lines().filter((l) => l.reqId === 'errored-1');
    // The service's error, with what failed; its completion line at debug (the gateway's says 500).
    const groups = lines.filter((l) => l.service === 'groups');
    expect(groups.map((l) => [l.level, l.msg])).toEqual([
      [50, 'request failed'],
      [20, 'request completed'],
    ]);
    expect(groups[0]!.err).toMatchObject({ message: 'the disk failed' });
    expect(lines.filter((l) => l.service === undefined).map((l) => [l.level, l.msg, (l.res as { statusCode?: number }).statusCode])).toEqual([[30, 'request completed', 500]]);
  });

  it("names a service once in each of its lines (a log reader keeps one of two equal keys, a JSON tool may refuse them)", async () => {
    for (const [service, path] of [['casties', '/api/home/new/'], ['groups', '/api/groups/'], ['social', `/api/profile/${ada.handle}/frodads/`], ['notifications', '/api/initialize/']] as const) {
      const res = await sys.request('GET', path, { user: ada, headers: { 'x-request-id': `named-once-${service}` } });
      expect(res.status, path).toBe(200);
      const raw = log.text().split('\n').filter((line) => line.includes(`"reqId":"named-once-${service}"`) && line.includes(`"service":"${service}"`));
      expect(raw.length, service).toBeGreaterThan(0);
      for (const line of raw) expect(line.match(/"service":/g), line).toHaveLength(1);
    }
  });
});
