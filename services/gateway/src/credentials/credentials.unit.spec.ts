import { createMemoryCache, CredentialStamps, type Cache } from '@castie/platform';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inProcessClient, type ServiceClient } from '../routing/service-client.ts';
import { VerifiedCredentials, type Presented } from './credentials.ts';

// An identity service as the gateway sees it: one person, who can change their password or handle
// (writing a new credential stamp, as identity does); it counts how often it is asked.
interface Person {
  password: string;
  handle: string;
  /** What identity answers as the stamp: the current one, or null when it cannot vouch. */
  vouch: boolean;
}

let cache: Cache;
let stamps: CredentialStamps;
let identity: FastifyInstance;
let client: ServiceClient;
let asked: number;
const person: Person = { password: 'secret1', handle: 'ada', vouch: true };
const ada = (password = person.password): Presented => ({ email: 'Ada@Example.com', password, inBody: false });

beforeEach(async () => {
  cache = createMemoryCache();
  stamps = new CredentialStamps(cache);
  Object.assign(person, { password: 'secret1', handle: 'ada', vouch: true });
  asked = 0;
  identity = Fastify();
  identity.post('/internal/authenticate', async (request, reply) => {
    asked += 1;
    const { email, password } = request.body as { email: string; password: string };
    if (email.toLowerCase() !== 'ada@example.com' || password !== person.password) return reply.code(401).send({ status: 401, error_type: 'authentication_failed', error_message: 'no' });
    const stamp = (await stamps.current('u1')) ?? (await stamps.changed('u1'));
    return { user: { userId: 'u1', handle: person.handle, email: 'ada@example.com' }, stamp: person.vouch ? stamp : null };
  });
  client = inProcessClient(identity);
  await identity.ready();
});
afterEach(async () => {
  await identity.close();
  await cache.close();
});

const gateway = () => new VerifiedCredentials(() => client, cache);

describe("the gateway's verified credentials", () => {
  it('asks identity once, then keeps the answer while the stamp stands', async () => {
    const credentials = gateway();
    for (let i = 0; i < 3; i++) expect(await credentials.userOf(ada(), `r${i}`)).toEqual({ userId: 'u1', handle: 'ada', email: 'ada@example.com' });
    expect(asked).toBe(1);
  });

  it('stops counting old credentials on the next request after a change, in every gateway', async () => {
    const [one, two] = [gateway(), gateway()];
    await one.userOf(ada(), 'r1');
    await two.userOf(ada(), 'r2');
    person.password = 'changed1';
    await stamps.changed('u1');
    expect(await one.userOf(ada('secret1'), 'r3')).toBeNull();
    expect(await two.userOf(ada('secret1'), 'r4')).toBeNull();
    expect((await one.userOf(ada('changed1'), 'r5'))?.userId).toBe('u1');
  });

  it('shows a new handle on the next request after a rename', async () => {
    const credentials = gateway();
    await credentials.userOf(ada(), 'r1');
    person.handle = 'lovelace';
    await stamps.changed('u1');
    expect((await credentials.userOf(ada(), 'r2'))?.handle).toBe('lovelace');
  });

  it('asks again when the stamp was lost with the cache', async () => {
    const credentials = gateway();
    await credentials.userOf(ada(), 'r1');
    await cache.del('credentials:u1');
    person.password = 'changed1';
    expect(await credentials.userOf(ada('secret1'), 'r2')).toBeNull();
  });

  it('keeps neither refusals, nor an answer identity could not vouch for, nor other passwords', async () => {
    const credentials = gateway();
    expect(await credentials.userOf(ada('wrong'), 'r1')).toBeNull();
    expect(await credentials.userOf(ada('wrong'), 'r2')).toBeNull();
    expect(asked).toBe(2);
    person.vouch = false;
    await credentials.userOf(ada(), 'r3');
    await credentials.userOf(ada(), 'r4');
    expect(asked).toBe(4);
    person.vouch = true;
    await credentials.userOf(ada(), 'r5');
    expect(await credentials.userOf(ada('secret1 '), 'r6')).toBeNull();
    expect(asked).toBe(6);
  });

  it('never opens a kept answer to credentials that split the same characters otherwise', async () => {
    const credentials = gateway();
    person.password = 'x\0secret1';
    expect((await credentials.userOf({ email: 'ada@example.com', password: 'x\0secret1', inBody: true }, 'r1'))?.userId).toBe('u1');
    expect(await credentials.userOf({ email: 'ada@example.com\0x', password: 'secret1', inBody: true }, 'r2')).toBeNull();
    expect(asked).toBe(2);
  });

  it('forgets an answer after its time to live', async () => {
    const credentials = new VerifiedCredentials(() => client, cache, { ttlMs: 1000 });
    await credentials.userOf(ada(), 'r1', 0);
    await credentials.userOf(ada(), 'r2', 999);
    await credentials.userOf(ada(), 'r3', 1000);
    expect(asked).toBe(2);
  });

  it('tells a caller that remembered an answer when it is no longer the one kept', async () => {
    const credentials = new VerifiedCredentials(() => client, cache, { ttlMs: 1000, maxEntries: 1 });
    await credentials.verify(ada(), 'r1', 0);
    const first = credentials.kept(ada(), 0)!;
    expect(credentials.stillKept(first, 999)).toBe(true);
    // Expired.
    expect(credentials.stillKept(first, 1000)).toBe(false);
    // Replaced by a newer answer for the same credentials.
    await credentials.verify(ada(), 'r2', 10);
    expect(credentials.stillKept(first, 20)).toBe(false);
    const second = credentials.kept(ada(), 20)!;
    expect(credentials.stillKept(second, 20)).toBe(true);
    // Forgotten when the stamp no longer held.
    await stamps.changed('u1');
    expect(credentials.holds(second, await credentials.currentStamp('u1'))).toBe(false);
    expect(credentials.stillKept(second, 20)).toBe(false);
    // Evicted for other credentials (one entry at most here).
    await credentials.verify(ada(), 'r3', 30);
    const third = credentials.kept(ada(), 30)!;
    expect(credentials.stillKept(third, 30)).toBe(true);
    person.password = 'changed1';
    expect(await credentials.verify(ada('changed1'), 'r4', 30)).not.toBeNull();
    expect(credentials.stillKept(third, 30)).toBe(false);
  });
});
