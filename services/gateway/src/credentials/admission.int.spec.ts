import { internalHeaders } from '@castie/contracts';
import { createMemoryCache, CredentialStamps, type Cache } from '@castie/platform';
import { createLocalMediaStore } from '@castie/platform/embedded/local-media-store';
import Fastify, { type FastifyInstance } from 'fastify';
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildGatewayApp } from '../app.ts';
import { inProcessClient } from '../routing/service-client.ts';
import { gatewayOverIdentity, type GatewayOverIdentity } from '../test-support/gateway-over-identity.ts';

/*
 * What a signed-in request costs in round trips to the cache (in the cluster, to Redis): the
 * gateway's cache is held between "rounds", and a round lets every call waiting on it go at once;
 * a call made after another one answered needs a round of its own.
 */

/** The cache port over process memory, whose calls wait for `release` while `held`. */
class HeldCache implements Cache {
  held = false;
  readonly waiting: (() => void)[] = [];
  constructor(
    readonly inner: Cache,
    /** Lends the inner cache's synchronous reads (a cache in this process): those are never held. */
    private readonly lendsInProcess = false,
  ) {}
  get inProcess() {
    return this.lendsInProcess ? this.inner.inProcess : undefined;
  }
  #gate<T>(call: () => Promise<T>): Promise<T> {
    if (!this.held) return call();
    return new Promise<void>((go) => this.waiting.push(go)).then(call);
  }
  get = (key: string) => this.#gate(() => this.inner.get(key));
  set = (key: string, value: string, ttlMs?: number) => this.#gate(() => this.inner.set(key, value, ttlMs));
  del = (key: string) => this.#gate(() => this.inner.del(key));
  increment = (key: string, ttlMs: number) => this.#gate(() => this.inner.increment(key, ttlMs));
  ttl = (key: string) => this.#gate(() => this.inner.ttl(key));
  publish = (channel: string, message: string) => this.inner.publish(channel, message);
  subscribe = (channel: string, onMessage: (message: string) => void) => this.inner.subscribe(channel, onMessage);
  close = () => this.inner.close();
}

let cache: HeldCache;
let identity: FastifyInstance;
let gateway: FastifyInstance;
let over: GatewayOverIdentity;
let asked: number;
let password: string;
/** While set, identity answers 503 (as while it rebuilds). */
let identityDown: boolean;
const ada = { authorization: `Basic ${Buffer.from('ada@example.com:secret1').toString('base64')}` };

/** The cache as the cluster has it (answers come back in rounds), or as the embedded profile has it (answered at once). */
let inProcess = false;

beforeEach(async () => {
  cache = new HeldCache(createMemoryCache(), inProcess);
  const stamps = new CredentialStamps(cache.inner);
  asked = 0;
  password = 'secret1';
  identityDown = false;
  // Identity as the gateway sees it: one person, vouched for under their stamp; GET
  // /api/preferences/ echoes who the gateway said the request is for.
  identity = Fastify();
  identity.post('/internal/authenticate', async (request, reply) => {
    asked += 1;
    if (identityDown) return reply.code(503).header('retry-after', '3').send({ status: 503, error_type: 'service_unavailable', error_message: 'rebuilding' });
    const body = request.body as { email: string; password: string };
    if (body.email !== 'ada@example.com' || body.password !== password) return reply.code(401).send({ status: 401, error_type: 'authentication_failed', error_message: 'no' });
    return { user: { userId: 'u1', handle: 'ada', email: 'ada@example.com' }, stamp: (await stamps.current('u1')) ?? (await stamps.changed('u1')) };
  });
  identity.get('/api/preferences/', async (request) => ({ status: 200, userId: request.headers[internalHeaders.userId], after: request.headers[internalHeaders.after] ?? null }));
  over = await gatewayOverIdentity(identity, cache, { abuseLimits: { requestsPerUserPerMinute: 4 } });
  gateway = over.gateway;
});

afterEach(async () => {
  await over.close();
  await cache.close();
});

/** GET /api/preferences/ as Ada, and how many rounds of cache calls it waited for. */
async function preferences(): Promise<{ status: number; body: Record<string, unknown>; rounds: number }> {
  cache.held = true;
  let done = false;
  const answer = gateway.inject({ method: 'GET', url: '/api/preferences/', headers: ada }).finally(() => (done = true));
  let rounds = 0;
  for (let turns = 0; !done; turns++) {
    if (turns > 1000) throw new Error('the request neither answered nor waited on the cache');
    // Let the request run until it waits on the cache (or answers).
    for (let i = 0; i < 5; i++) await new Promise((turned) => setImmediate(turned));
    if (cache.waiting.length === 0) continue;
    rounds += 1;
    for (const go of cache.waiting.splice(0)) go();
  }
  cache.held = false;
  const res = await answer;
  return { status: res.statusCode, body: JSON.parse(res.payload) as Record<string, unknown>, rounds };
}

/**
 * One keep-alive connection to `app`, listening on a port of its own: every request goes over the
 * same socket, as a signed-in app's do. `connections` counts the sockets the server accepted.
 */
async function oneConnection(app: FastifyInstance) {
  let connections = 0;
  app.server.on('connection', () => (connections += 1));
  const { port } = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    get connections() {
      return connections;
    },
    get(headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
      return new Promise((answered, failed) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/api/preferences/', agent, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => answered({ status: res.statusCode!, body: JSON.parse(text) as Record<string, unknown> }));
        });
        req.on('error', failed).end();
      });
    },
    close: () => agent.destroy(),
  };
}

describe.each([
  { cache: 'across a network', inProcess: false, rounds: 1 },
  { cache: 'in this process', inProcess: true, rounds: 0 },
])('a signed-in request and a cache $cache', (mode) => {
  beforeAll(() => {
    inProcess = mode.inProcess;
  });
  afterAll(() => {
    inProcess = false;
  });

  it('reads the cache in one round (or at once) with credentials the gateway kept, and still sends where the user last wrote', async () => {
    expect((await preferences()).status).toBe(200);
    await cache.inner.set('session:u1', 'identity:0:41', 60_000);
    const kept = await preferences();
    expect(kept).toMatchObject({ status: 200, body: { userId: 'u1', after: 'identity:0:41' } });
    // Locks, the credential stamp, the request budget and the session positions, read together.
    expect(kept.rounds).toBe(mode.rounds);
    expect(asked).toBe(1);
  });

  it('asks identity again once the stamp changed, and counts the request once', async () => {
    await preferences();
    await new CredentialStamps(cache.inner).changed('u1');
    expect(await preferences()).toMatchObject({ status: 200, body: { userId: 'u1' } });
    expect(asked).toBe(2);
    expect(await cache.inner.get('budget:user:u1')).toBe('2');
  });

  it('refuses a changed password that the gateway had kept', async () => {
    await preferences();
    password = 'changed1';
    await new CredentialStamps(cache.inner).changed('u1');
    expect((await preferences()).status).toBe(401);
  });

  it('refuses kept credentials while the account or the client address is locked', async () => {
    await preferences();
    for (const lock of ['lock:account:ada@example.com', 'lock:address:127.0.0.1']) {
      await cache.inner.set(lock, '1', 60_000);
      expect(await preferences()).toMatchObject({ status: 429, body: { error_type: 'too_many_requests' } });
      await cache.inner.del(lock);
      // Refused requests count against the budget (4 a minute here) too.
      await cache.inner.del('budget:user:u1');
      expect((await preferences()).status).toBe(200);
    }
  });

  it('refuses kept credentials past the request budget, saying when to come back', async () => {
    for (let i = 0; i < 4; i++) expect((await preferences()).status).toBe(200);
    expect(await preferences()).toMatchObject({ status: 429, body: { error_type: 'too_many_requests' } });
    const res = await gateway.inject({ method: 'GET', url: '/api/preferences/', headers: ada });
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
  });

  describe('on one keep-alive connection', () => {
    let connection: Awaited<ReturnType<typeof oneConnection>>;
    beforeEach(async () => {
      connection = await oneConnection(gateway);
    });
    afterEach(() => {
      connection.close();
      vi.useRealTimers();
    });

    it('admits the same header again without asking identity, and counts a changed password from the next request', async () => {
      for (let i = 0; i < 2; i++) expect(await connection.get(ada)).toMatchObject({ status: 200, body: { userId: 'u1' } });
      expect(asked).toBe(1);
      expect(await cache.inner.get('budget:user:u1')).toBe('2');
      password = 'changed1';
      await new CredentialStamps(cache.inner).changed('u1');
      expect((await connection.get(ada)).status).toBe(401);
      expect((await connection.get({ authorization: `Basic ${Buffer.from('ada@example.com:changed1').toString('base64')}` })).status).toBe(200);
      expect(connection.connections).toBe(1);
    });

    it('sends where the user last wrote from the next request on, and never past the positions\' time to live', async () => {
      expect(await connection.get(ada)).toMatchObject({ status: 200, body: { after: null } });
      // Written through another gateway, or another connection of this one.
      await cache.inner.set('session:u1', 'casties:0:7', 300);
      expect(await connection.get(ada)).toMatchObject({ status: 200, body: { after: 'casties:0:7' } });
      expect(await connection.get(ada)).toMatchObject({ status: 200, body: { after: 'casties:0:7' } });
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect(await connection.get(ada)).toMatchObject({ status: 200, body: { after: null } });
      expect(asked).toBe(1);
      // Four requests, each counted (four a minute here).
      expect(await cache.inner.get('budget:user:u1')).toBe('4');
      expect((await connection.get(ada)).status).toBe(429);
    });

    it('checks another header on the same connection as credentials of its own', async () => {
      expect((await connection.get(ada)).status).toBe(200);
      const wrong = { authorization: `Basic ${Buffer.from('ada@example.com:secret2').toString('base64')}` };
      expect(await connection.get(wrong)).toMatchObject({ status: 401, body: { error_type: 'authentication_failed' } });
      expect(await cache.inner.get('failures:account:ada@example.com')).toBe('1');
      expect((await connection.get(ada)).status).toBe(200);
      expect(asked).toBe(2);
      expect(connection.connections).toBe(1);
    });

    it('still refuses while the account is locked, and past the budget', async () => {
      expect((await connection.get(ada)).status).toBe(200);
      await cache.inner.set('lock:account:ada@example.com', '1', 60_000);
      expect(await connection.get(ada)).toMatchObject({ status: 429, body: { error_type: 'too_many_requests' } });
      await cache.inner.del('lock:account:ada@example.com');
      expect((await connection.get(ada)).status).toBe(200);
      expect((await connection.get(ada)).status).toBe(200);
      // The fifth request this minute, four allowed here.
      expect((await connection.get(ada)).status).toBe(429);
      expect(connection.connections).toBe(1);
    });

    it('counts the locks of the address each request comes from, behind a proxy that shares the connection', async () => {
      const proxied = await buildGatewayApp({ services: { identity: inProcessClient(identity) }, media: createLocalMediaStore({ dir: over.mediaDir }), cache, adminToken: 'admission-admin-token-0123456789', trustProxy: '127.0.0.1' });
      const shared = await oneConnection(proxied);
      try {
        expect((await shared.get({ ...ada, 'x-forwarded-for': '203.0.113.1' })).status).toBe(200);
        await cache.inner.set('lock:address:203.0.113.2', '1', 60_000);
        expect((await shared.get({ ...ada, 'x-forwarded-for': '203.0.113.2' })).status).toBe(429);
        expect((await shared.get({ ...ada, 'x-forwarded-for': '203.0.113.1' })).status).toBe(200);
        expect(shared.connections).toBe(1);
      } finally {
        shared.close();
        await proxied.close();
      }
    });

    it('asks identity again once the kept answer expired, as on a new connection', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      expect((await connection.get(ada)).status).toBe(200);
      vi.setSystemTime(Date.now() + 5 * 60_000 + 1000);
      await cache.inner.del('budget:user:u1');
      expect((await connection.get(ada)).status).toBe(200);
      expect(asked).toBe(2);
      expect(connection.connections).toBe(1);
    });
  });

  it('answers 503 with Retry-After while identity is down, and counts no failed sign-in', async () => {
    identityDown = true;
    for (let i = 0; i < 6; i++) {
      const res = await gateway.inject({ method: 'GET', url: '/api/preferences/', headers: ada });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('3');
      expect(JSON.parse(res.payload)).toMatchObject({ error_type: 'service_unavailable' });
    }
    expect(await cache.inner.get('failures:account:ada@example.com')).toBeNull();
    identityDown = false;
    expect((await preferences()).status).toBe(200);
  });
});
