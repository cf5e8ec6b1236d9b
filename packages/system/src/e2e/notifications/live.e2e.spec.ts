import { buildGatewayApp, inProcessClient, type LiveStreams, type ServiceClient } from '@castie/gateway';
import type { ServiceName } from '@castie/contracts';
import type { Cache } from '@castie/platform';
import { createLocalMediaStore } from '@castie/platform/embedded/local-media-store';
import { createRedisCache } from '@castie/platform/redis/redis-cache';
import { testRedis } from '@castie/platform/testing';
import type { FastifyInstance } from 'fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressOf, basic, newUser, TestSystem, type TestUser } from '../../testing/harness.ts';
import { SseClient } from '../../testing/sse.ts';

/*
 * Live notification counts over Server-Sent Events, on real sockets: the gateway listens on a
 * free port, as in production. Heartbeats every 200 ms here (15 s by default).
 */

const HEARTBEAT_MS = 200;
let sys: TestSystem;
let base: string;
const streams = () => (sys.system.gateway as unknown as { liveStreams: LiveStreams }).liveStreams;

beforeAll(async () => {
  sys = await TestSystem.start({ env: { LIVE_HEARTBEAT_MS: String(HEARTBEAT_MS), LIVE_STREAMS_PER_USER: '3', USER_REQUESTS_PER_MINUTE: '100000' } });
  base = await sys.system.gateway.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => sys.close());

const open = (user: Pick<TestUser, 'email' | 'password'>, headers: Record<string, string> = {}) => SseClient.open(`${base}/api/notifications/stream/`, { authorization: basic(user), ...headers });
const initialize = async (user: TestUser) => {
  const { status: _status, ...counts } = (await sys.get('/api/initialize/', user)).body;
  return counts;
};

/** Waits for the stream's next counts event and checks they are what a poll answers now. */
async function nextCounts(stream: SseClient, user: TestUser, seen: number) {
  await stream.waitForEvents(seen + 1);
  const event = stream.events[seen]!;
  expect(event.event).toBe('counts');
  const counts = JSON.parse(event.data) as Record<string, unknown>;
  expect(counts).toEqual(await initialize(user));
  expect(event.id).toBe(`${String(counts.number_notifications)}.${String(counts.number_needing_answer)}`);
  return counts;
}

async function group(slug: string, requiresApproval = false) {
  expect((await sys.admin('POST', '/admin/groups/', { slug, groupName: `The ${slug}`, groupInfoText: 'info', requiresApproval, accessDeniedMessage: 'ask first' })).status).toBe(200);
}

async function castie(user: TestUser, slug: string, question: string) {
  const end = new Date(sys.clock.now().getTime() + 60 * 60_000);
  const res = await sys.post(
    '/api/casties/create/',
    { group_slug: slug, poll_type: 'Regular', closes_on_date: end.toISOString().slice(0, 10), closes_on_time: end.toISOString().slice(11, 16), question, answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'true' },
    user,
  );
  expect(res.status, res.text).toBe(200);
  return res.body.castie_uuid as string;
}

describe('live notification counts (SSE)', () => {
  it('sends the counts at once, as an event stream with an id, then heartbeat comments', async () => {
    const ann = await sys.signUp();
    const stream = await open(ann);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(stream.headers['cache-control']).toMatch(/no-cache/);
      expect(stream.headers['x-request-id']).toMatch(/.+/);
      expect(await nextCounts(stream, ann, 0)).toEqual({ number_notifications: 0, needs_answer: false, number_needing_answer: 0 });
      await sleep(HEARTBEAT_MS * 2.5);
      expect(stream.comments).toBeGreaterThanOrEqual(2);
      // Nothing changed: no second counts event.
      expect(stream.events).toHaveLength(1);
    } finally {
      stream.close();
    }
  });

  it('sends new counts on each kind of change, equal to what initialize answers', async () => {
    const ann = await sys.signUp();
    const ben = await sys.signUp();
    const cat = await sys.signUp();
    const slug = `live${Date.now().toString(36)}`;
    const closed = `${slug}x`;
    await group(slug);
    await group(closed, true);
    for (const u of [ann, ben, cat]) expect((await sys.post(`/api/groups/${slug}/follow/`, {}, u)).status).toBe(200);
    const [a, b] = [await open(ann), await open(ben)];
    try {
      let seenA = 0;
      let seenB = 0;
      await nextCounts(a, ann, seenA++);
      await nextCounts(b, ben, seenB++);

      // A friend request: the target's count grows.
      await sys.post(`/api/add-frodad/${ben.handle}/`, {}, ann);
      expect((await nextCounts(b, ben, seenB++)).number_notifications).toBe(1);
      // Its acceptance: the sender hears of it; the request is gone for the target.
      await sys.post(`/api/frodad-requests/${ann.handle}/accept/`, {}, ben);
      expect((await nextCounts(a, ann, seenA++)).number_notifications).toBe(1);
      expect((await nextCounts(b, ben, seenB++)).number_notifications).toBe(0);

      // Opening the Activity section reads them: the count drops to zero, live too.
      sys.clock.advance(1);
      await sys.get('/api/notifications/', ann);
      expect((await nextCounts(a, ann, seenA++)).number_notifications).toBe(0);

      // A new Castie in a group ann follows.
      sys.clock.advance(1);
      const uuid = await castie(cat, slug, 'Will the live stream tell?');
      expect((await nextCounts(a, ann, seenA++)).number_notifications).toBe(1);
      await nextCounts(b, ben, seenB++);

      // A Castie of ann's forecast by someone.
      sys.clock.advance(1);
      await sys.get('/api/notifications/', ann);
      await nextCounts(a, ann, seenA++);
      const own = await castie(ann, slug, 'Is ann forecast?');
      const options = Object.keys((await sys.get(`/api/casties/${own}/answer/`, ann)).body.answer_options as Record<string, string>);
      sys.clock.advance(1);
      await sys.post(`/api/casties/${own}/forecast/`, { answer_id: options[0]! }, cat);
      expect((await nextCounts(a, ann, seenA++)).number_notifications).toBe(1);

      // Ann forecasts cat's Castie; once it ends and cat answers, ann hears of the answer.
      const catOptions = Object.keys((await sys.get(`/api/casties/${uuid}/answer/`, cat)).body.answer_options as Record<string, string>);
      await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: catOptions[0]! }, ann);
      // Ben (ann's frodad, following the group) hears of her forecast.
      await nextCounts(b, ben, seenB++);

      // Ann's own Castie reaches its end time: it needs her answer (no event: the clock moved).
      sys.clock.advance(2 * 3600);
      const needing = await nextCounts(a, ann, seenA++);
      expect(needing).toMatchObject({ needs_answer: true, number_needing_answer: 1 });

      await sys.get('/api/notifications/', ann);
      await nextCounts(a, ann, seenA++);
      sys.clock.advance(1);
      expect((await sys.post(`/api/casties/${uuid}/answer/`, { answer_id: catOptions[0]! }, cat)).status).toBe(200);
      const answered = await nextCounts(a, ann, seenA++);
      expect(answered.number_notifications).toBe(2);

      // Group access granted.
      expect((await sys.post(`/api/groups/${closed}/follow/`, {}, ann)).status).toBe(200);
      expect((await sys.admin('POST', `/admin/groups/${closed}/access/${ann.handle}/grant/`)).status).toBe(200);
      expect((await nextCounts(a, ann, seenA++)).number_notifications).toBe(3);
    } finally {
      a.close();
      b.close();
    }
  });

  it('resumes after a reconnect: Last-Event-ID holding the current counts gets nothing new, an older one gets the current counts', async () => {
    const ann = await sys.signUp();
    const ben = await sys.signUp();
    const first = await open(ann);
    await first.waitForEvents(1);
    const held = first.events[0]!.id!;
    first.close();

    const same = await open(ann, { 'last-event-id': held });
    await sleep(HEARTBEAT_MS * 2);
    expect(same.events).toEqual([]);
    same.close();

    // A change while the client is away.
    await sys.post(`/api/add-frodad/${ann.handle}/`, {}, ben);
    await sleep(100);
    const resumed = await open(ann, { 'last-event-id': held });
    try {
      const counts = await nextCounts(resumed, ann, 0);
      expect(counts.number_notifications).toBe(1);
      expect(resumed.events[0]!.id).not.toBe(held);
    } finally {
      resumed.close();
    }
  });

  it('opens with a short-lived token instead of credentials; a forged, unknown or expired token is refused with 401', async () => {
    const ann = await sys.signUp();
    // Credentials in the body work as on any POST.
    const issued = await sys.post('/api/notifications/stream-token/', { username: ann.email, password: ann.password });
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ status: 200, expires_in: 60 });
    const token = issued.body.token as string;

    const stream = await SseClient.open(`${base}/api/notifications/stream/?token=${encodeURIComponent(token)}`);
    try {
      expect(stream.status).toBe(200);
      expect(await nextCounts(stream, ann, 0)).toMatchObject({ number_notifications: 0 });
    } finally {
      stream.close();
    }

    const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const bad of [forged, 'not-a-token', '']) {
      const refused = await SseClient.open(`${base}/api/notifications/stream/?token=${encodeURIComponent(bad)}`);
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toMatchObject({ status: 401, error_type: 'authentication_failed' });
    }
    expect((await SseClient.open(`${base}/api/notifications/stream/`)).status).toBe(401);
    expect((await open({ email: ann.email, password: 'wrong-password' })).status).toBe(401);
    expect((await sys.post('/api/notifications/stream-token/', {})).status).toBe(401);
  });

  it('HEAD answers as GET does without the stream; another method is refused with incorrect_request_type', async () => {
    const ann = await sys.signUp();
    const head = await sys.request('HEAD', '/api/notifications/stream/', { user: ann });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(head.text).toBe('');
    expect((await sys.request('HEAD', '/api/notifications/stream/')).status).toBe(401);
    const post = await sys.post('/api/notifications/stream/', {}, ann);
    expect(post.status).toBe(400);
    expect(post.body.error_type).toBe('incorrect_request_type');
    expect((await sys.get('/api/notifications/stream-token/', ann)).body.error_type).toBe('incorrect_request_type');
  });

  it('a token stands for the Api-Key a browser cannot send, and expires with its lifetime', async () => {
    const short = await TestSystem.start({ env: { LIVE_TOKEN_SECONDS: '5', API_KEYS: 'the-app-key' } });
    try {
      const url = await short.system.gateway.listen({ port: 0, host: '127.0.0.1' });
      const key = { 'api-key': 'the-app-key' };
      const ann = newUser('keyed');
      const from = addressOf(ann.email);
      for (const [step, fields] of [
        ['email', { email: ann.email }],
        ['password', { email: ann.email, password: ann.password }],
        ['handle', { email: ann.email, handle: ann.handle, first_name: ann.firstName, last_name: ann.lastName }],
        ['picture', { email: ann.email, handle: ann.handle }],
      ] as const) expect((await short.request('POST', `/api/signup/${step}/`, { form: fields, headers: key, from })).status).toBe(200);
      expect((await short.request('POST', '/api/notifications/stream-token/', { user: ann })).status).toBe(401);
      const token = (await short.request('POST', '/api/notifications/stream-token/', { user: ann, headers: key })).body.token as string;
      expect((await SseClient.open(`${url}/api/notifications/stream/`, { authorization: basic(ann) })).status).toBe(401);
      const ok = await SseClient.open(`${url}/api/notifications/stream/?token=${token}`);
      expect(ok.status).toBe(200);
      ok.close();
      await sleep(5200);
      const expired = await SseClient.open(`${url}/api/notifications/stream/?token=${token}`);
      expect(expired.status).toBe(401);
    } finally {
      await short.close();
    }
  }, 15_000);

  it('allows at most LIVE_STREAMS_PER_USER open streams per user: one more answers 429 in the envelope', async () => {
    const ann = await sys.signUp();
    const ben = await sys.signUp();
    const held = [await open(ann), await open(ann), await open(ann)];
    try {
      expect(held.map((s) => s.status)).toEqual([200, 200, 200]);
      const over = await open(ann);
      expect(over.status).toBe(429);
      expect(over.headers['retry-after']).toMatch(/^\d+$/);
      expect(JSON.parse(over.body)).toMatchObject({ status: 429, error_type: 'too_many_requests' });
      // Another user is not held back.
      const other = await open(ben);
      expect(other.status).toBe(200);
      other.close();
      // Closing one frees its place.
      held.pop()!.close();
      await sleep(50);
      const again = await open(ann);
      expect(again.status).toBe(200);
      held.push(again);
    } finally {
      for (const s of held) s.close();
    }
  });

  it('keeps no memory over 2,000 connect/disconnect cycles', async () => {
    const ann = await sys.signUp();
    const token = (await sys.post('/api/notifications/stream-token/', {}, ann)).body.token as string;
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const cycle = async () => {
      const s = await SseClient.open(`${base}/api/notifications/stream/?token=${token}`);
      await s.waitForEvents(1);
      s.close();
    };
    const settle = async () => {
      for (let i = 0; i < 100 && streams().size > 0; i++) await sleep(10);
      expect(streams().size).toBe(0);
      for (let i = 0; i < 3; i++) {
        gc();
        await sleep(20);
      }
      return process.memoryUsage().heapUsed;
    };
    for (let i = 0; i < 200; i++) await cycle();
    const before = await settle();
    for (let i = 0; i < 2000; i++) await cycle();
    const after = await settle();
    // Leaking even 2 KiB per cycle would be 4 MB.
    expect(after - before).toBeLessThan(3 * 1024 * 1024);
  }, 120_000);

  it('closes open streams when the gateway stops, without waiting for them', async () => {
    const own = await TestSystem.start();
    const url = await own.system.gateway.listen({ port: 0, host: '127.0.0.1' });
    const ann = await own.signUp();
    const stream = await SseClient.open(`${url}/api/notifications/stream/`, { authorization: basic(ann) });
    await stream.waitForEvents(1);
    const started = Date.now();
    await own.close();
    expect(Date.now() - started).toBeLessThan(3000);
    await stream.waitForEnd();
  });
});

const redis = await testRedis();
describe.skipIf(!redis.url)(`live counts across gateways sharing Redis${redis.url ? '' : ` (skipped: ${redis.reason})`}`, () => {
  let shared: TestSystem;
  let second: FastifyInstance;
  let mediaDir: string;
  let secondCache: Cache | null = null;
  afterAll(async () => {
    await second?.close();
    await secondCache?.close();
    await shared?.close();
    if (mediaDir) await rm(mediaDir, { recursive: true, force: true });
  });

  it('a stream held by a second gateway receives a change written through the first', async () => {
    shared = await TestSystem.start({ env: { REDIS_URL: redis.url! } });
    // A second gateway in front of the same services, with its own Redis connection: as two
    // gateway replicas of the cluster are.
    mediaDir = await mkdtemp(join(tmpdir(), 'castie-live-'));
    const clients: Partial<Record<ServiceName, ServiceClient>> = {};
    for (const [name, built] of shared.system.services) clients[name] = inProcessClient(built.app);
    second = await buildGatewayApp({ services: clients, media: createLocalMediaStore({ dir: mediaDir }), cache: (secondCache = createRedisCache({ url: redis.url!, keyPrefix: 'castie:' })), adminToken: 'second-gateway-admin-token' });
    const url = await second.listen({ port: 0, host: '127.0.0.1' });

    const ann = await shared.signUp();
    const ben = await shared.signUp();
    const stream = await SseClient.open(`${url}/api/notifications/stream/`, { authorization: basic(ben) });
    try {
      await stream.waitForEvents(1);
      expect(stream.last()).toMatchObject({ number_notifications: 0 });
      // Through the first gateway (inject), as another replica would take it.
      expect((await shared.post(`/api/add-frodad/${ben.handle}/`, {}, ann)).status).toBe(200);
      await stream.waitForEvents(2);
      expect(stream.last()).toMatchObject({ number_notifications: 1 });
    } finally {
      stream.close();
    }
  });
});
