import { internalHeaders } from '@castie/contracts';
import { createMemoryCache, CredentialStamps, type Cache } from '@castie/platform';
import { createLocalMediaStore } from '@castie/platform/embedded/local-media-store';
import Fastify, { type FastifyInstance } from 'fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildGatewayApp } from '../app.ts';
import { inProcessClient } from '../routing/service-client.ts';

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
let mediaDir: string;
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
  const client = inProcessClient(identity);
  await identity.ready();
  mediaDir = await mkdtemp(join(tmpdir(), 'castie-admission-'));
  gateway = await buildGatewayApp({ services: { identity: client }, media: createLocalMediaStore({ dir: mediaDir }), cache, adminToken: 'admission-admin-token-0123456789', abuseLimits: { requestsPerUserPerMinute: 4 } });
  await gateway.ready();
});

afterEach(async () => {
  await gateway.close();
  await identity.close();
  await cache.close();
  await rm(mediaDir, { recursive: true, force: true });
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
