import { internalHeaders } from '@castie/contracts';
import { createMemoryCache, CredentialStamps, type Cache } from '@castie/platform';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheOver } from '../test-support/cache-over.ts';
import { gatewayOverIdentity, type GatewayOverIdentity } from '../test-support/gateway-over-identity.ts';

/*
 * Whose writes the gateway keeps the log positions of (rule 6), with identity faked: a signed-in
 * caller's own, and a sign-up step's for the user the service names.
 */

let cache: Cache;
let identity: FastifyInstance;
let gateway: FastifyInstance;
let over: GatewayOverIdentity;
/** While set, the cache refuses to keep session positions. */
let sessionsDown: boolean;
const ada = { authorization: `Basic ${Buffer.from('ada@example.com:secret1').toString('base64')}` };

beforeEach(async () => {
  sessionsDown = false;
  const memory = createMemoryCache();
  // Process memory, whose writes of session positions fail while `sessionsDown`.
  cache = cacheOver(memory, { set: (key, value, ttlMs) => (sessionsDown && key.startsWith('session:') ? Promise.reject(new Error('cache unavailable')) : memory.set(key, value, ttlMs)) });
  const stamps = new CredentialStamps(memory);
  identity = Fastify();
  identity.post('/internal/authenticate', async () => ({ user: { userId: 'u1', handle: 'ada', email: 'ada@example.com' }, stamp: (await stamps.current('u1')) ?? (await stamps.changed('u1')) }));
  // A sign-up step (no credentials) that wrote for u2, and a signed-in write that names someone else.
  identity.post('/api/signup/picture/', async (_request, reply) => reply.header(internalHeaders.written, 'identity:0:9').header(internalHeaders.writtenFor, 'u2').send({ status: 200 }));
  identity.post('/api/preferences/', async (_request, reply) => reply.header(internalHeaders.written, 'identity:0:12').header(internalHeaders.writtenFor, 'u9').send({ status: 200, message: 'saved', is_private: true }));
  identity.get('/api/preferences/', async (request) => ({ status: 200, after: request.headers[internalHeaders.after] ?? null }));
  over = await gatewayOverIdentity(identity, cache);
  gateway = over.gateway;
});

afterEach(async () => {
  await over.close();
  await cache.close();
});

describe('the log positions of writes, kept for the next requests', () => {
  it("keeps a sign-up step's positions for the user the service names, and sends none to whoever asks", async () => {
    const step = await gateway.inject({ method: 'POST', url: '/api/signup/picture/', payload: { email: 'bo@example.com', handle: 'bo' } });
    expect(step.statusCode).toBe(200);
    // Internal headers stay inside.
    expect(step.headers[internalHeaders.written]).toBeUndefined();
    expect(step.headers[internalHeaders.writtenFor]).toBeUndefined();
    expect(await cache.get('session:u2')).toBe('identity:0:9');
    expect(await cache.get('session:u1')).toBeNull();
  });

  it("keeps a signed-in caller's positions for the caller, whoever the service names", async () => {
    expect((await gateway.inject({ method: 'POST', url: '/api/preferences/', headers: ada, payload: { is_private: true } })).statusCode).toBe(200);
    expect(await cache.get('session:u9')).toBeNull();
    const next = await gateway.inject({ method: 'GET', url: '/api/preferences/', headers: ada });
    expect(JSON.parse(next.payload)).toMatchObject({ after: 'identity:0:12' });
  });

  it('answers a write that was made though the cache could not keep its positions', async () => {
    sessionsDown = true;
    const res = await gateway.inject({ method: 'POST', url: '/api/preferences/', headers: ada, payload: { is_private: true } });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.payload)).toMatchObject({ is_private: true });
  });
});
