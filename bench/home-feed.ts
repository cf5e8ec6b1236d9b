// Home feed throughput through the gateway at the size the service expects: ≥10k users and ≥20k
// Casties over 200 days, with follows, forecasts and friendships. The population is written as
// events straight into the embedded event stores (no 30k HTTP sign-ups with argon2); the whole
// system then starts on that data directory (replaying the log into every read model), a few
// reader accounts sign up through the API, and each home tab is requested through the gateway
// with inject for a fixed time.
// Run: node scripts/castie.mjs bench home-feed [users=10000] [casties=20000]
// bench/ sits outside the workspace packages, so it imports the source directly.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventEnvelope } from '../packages/contracts/src/events/envelope.ts';
import { createFileEventLog } from '../packages/platform/src/embedded/file-event-log.ts';
import { createLogEventStore } from '../packages/platform/src/embedded/log-event-store.ts';
import type { EventStore } from '../packages/platform/src/ports/event-store.ts';
import { TestSystem, type TestUser } from '../packages/system/src/testing/harness.ts';

const USERS = Number(process.argv[2] ?? 10_000);
const CASTIES = Number(process.argv[3] ?? 20_000);
const GROUPS = 50;
const APPROVAL_GROUPS = 5;
const FOLLOWS_PER_USER = 3;
const FORECASTS_PER_CASTIE = 2;
const FRIENDS_PER_USER = 2;
const DAYS = 200;
const READERS = 8;
const RUN_MS = 3_000;
const CONCURRENCY = 8;
const NOW = new Date('2026-03-01T12:00:00Z');

const id = (): string => randomUUID().replaceAll('-', '');
// A fixed seed, so runs are comparable.
let seed = 42;
const rand = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

const dataDir = await mkdtemp(join(tmpdir(), 'castie-bench-home-'));
const log = await createFileEventLog({ dir: join(dataDir, 'log') });
const stores: Record<string, EventStore> = {};
for (const topic of ['identity', 'groups', 'casties', 'social']) stores[topic] = await createLogEventStore({ log, topic });

/** Appends new streams of events, many at once so that appends share the log's group commits. */
async function write(topic: string, streams: { streamId: string; events: { type: string; data: unknown; at: Date }[] }[]): Promise<void> {
  const store = stores[topic]!;
  for (let i = 0; i < streams.length; i += 2_000) {
    await Promise.all(
      streams.slice(i, i + 2_000).map((s) =>
        store.appendToStream(
          s.streamId,
          s.events.map((e): Omit<EventEnvelope, 'streamVersion'> => ({ id: id(), type: e.type, schemaVersion: 1, streamId: s.streamId, occurredAt: e.at.toISOString(), actor: 'bench', data: e.data })),
          { expectedVersion: 'no_stream' },
        ),
      ),
    );
  }
}

const started = performance.now();
const past = (days: number): Date => new Date(NOW.getTime() - days * 86_400_000);
const users = Array.from({ length: USERS }, (_, i) => ({ userId: id(), handle: `bench${i}` }));
await write(
  'identity',
  users.map((u) => ({
    streamId: `account-${u.userId}`,
    events: [
      { type: 'AccountOpened', data: { userId: u.userId }, at: past(DAYS + 1) },
      { type: 'ProfileNamed', data: { userId: u.userId, handle: u.handle, firstName: 'Bench', lastName: u.handle }, at: past(DAYS + 1) },
      { type: 'SignUpCompleted', data: { userId: u.userId, profPic: '' }, at: past(DAYS + 1) },
    ],
  })),
);
const slugs = Array.from({ length: GROUPS }, (_, i) => `group${i}`);
await write(
  'groups',
  slugs.map((slug, i) => ({
    streamId: `group-${slug}`,
    events: [{ type: 'GroupCreated', data: { slug, groupName: `Group ${i}`, groupInfoText: '', groupIcon: '', requiresApproval: i < APPROVAL_GROUPS, accessDeniedMessage: '', restrictCreation: false }, at: past(DAYS + 1) }],
  })),
);
const follows = new Map<string, Set<string>>();
const memberships: Parameters<typeof write>[1] = [];
for (const u of users) {
  const mine = new Set<string>();
  while (mine.size < FOLLOWS_PER_USER) mine.add(pick(slugs));
  follows.set(u.userId, mine);
  for (const slug of mine) {
    const approval = slugs.indexOf(slug) < APPROVAL_GROUPS;
    memberships.push({
      streamId: `membership-${slug}-${u.userId}`,
      events: approval
        ? [
            { type: 'GroupAccessRequested', data: { slug, userId: u.userId }, at: past(DAYS + 1) },
            { type: 'GroupAccessGranted', data: { slug, userId: u.userId, grantedBy: 'admin' }, at: past(DAYS + 1) },
          ]
        : [{ type: 'GroupFollowed', data: { slug, userId: u.userId }, at: past(DAYS + 1) }],
    });
  }
}
await write('groups', memberships);
const friendships: Parameters<typeof write>[1] = [];
const paired = new Set<string>();
for (const u of users) {
  for (let k = 0; k < FRIENDS_PER_USER; k++) {
    const other = pick(users);
    const [a, b] = [u.userId, other.userId].sort();
    if (a === b || paired.has(`${a}-${b}`)) continue;
    paired.add(`${a}-${b}`);
    friendships.push({
      streamId: `frodads-${a}-${b}`,
      events: [
        { type: 'FrodadRequested', data: { fromId: u.userId, toId: other.userId }, at: past(DAYS) },
        { type: 'FrodadRequestAccepted', data: { fromId: u.userId, toId: other.userId }, at: past(DAYS) },
      ],
    });
  }
}
await write('social', friendships);
const casties: Parameters<typeof write>[1] = [];
const forecasts: Parameters<typeof write>[1] = [];
for (let i = 0; i < CASTIES; i++) {
  const creator = pick(users);
  const groupSlug = pick([...follows.get(creator.userId)!]);
  const castieId = id();
  const createdAt = past(DAYS * (1 - i / CASTIES));
  const options = [
    { answerId: 2 * i + 1, text: 'Yes' },
    { answerId: 2 * i + 2, text: 'No' },
  ];
  casties.push({
    streamId: `castie-${castieId}`,
    events: [
      {
        type: 'CastieCreated',
        data: { castieId, groupSlug, creatorId: creator.userId, question: `Will thing number ${i} happen before the deadline?`, showUsername: true, allowWriteIn: false, options, endsAt: null, endDate: null, endTime: null, createdAt: createdAt.toISOString() },
        at: createdAt,
      },
    ],
  });
  for (let k = 0; k < FORECASTS_PER_CASTIE; k++) {
    const who = pick(users);
    const placedAt = new Date(createdAt.getTime() + rand() * (NOW.getTime() - createdAt.getTime()));
    const answer = pick(options);
    forecasts.push({
      streamId: `forecast-${castieId}-${who.userId}`,
      events: [{ type: 'ForecastPlaced', data: { castieId, groupSlug, userId: who.userId, forecastId: i * 10 + k + 1, answerId: answer.answerId, text: answer.text, placedAt: placedAt.toISOString() }, at: placedAt }],
    });
  }
}
await write('casties', casties);
// Two forecasts of one user on one Castie would be one stream twice: keep the first.
const seenForecasts = new Set<string>();
await write(
  'casties',
  forecasts.filter((f) => !seenForecasts.has(f.streamId) && seenForecasts.add(f.streamId)),
);
const eventsWritten = (await Promise.all(['identity', 'groups', 'casties', 'social'].map(async (t) => [...(await log.endOffsets(t)).values()].reduce((a, b) => a + b, 0)))).reduce((a, b) => a + b, 0);
for (const store of Object.values(stores)) await store.close();
await log.close();
const generatedMs = performance.now() - started;

const boot = performance.now();
// As in production: responses are not re-validated against their schemas (tests do that).
const sys = await TestSystem.start({ dataDir, now: NOW, checkResponses: false });
const bootMs = performance.now() - boot;
const readers: TestUser[] = [];
for (let i = 0; i < READERS; i++) {
  const reader = await sys.signUp();
  for (const slug of slugs.slice(APPROVAL_GROUPS, APPROVAL_GROUPS + 5 + i)) await sys.post(`/api/groups/${slug}/follow/`, {}, reader);
  readers.push(reader);
}

/** Requests `url` from CONCURRENCY clients for RUN_MS; requests per second and latency percentiles. */
async function measure(url: string): Promise<{ rps: number; p50: number; p95: number; items: number }> {
  const latencies: number[] = [];
  let items = 0;
  for (const r of readers) {
    const res = await sys.get(url, r);
    if (res.status !== 200) throw new Error(`${url}: ${res.text}`);
  }
  const until = performance.now() + RUN_MS;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, c) => {
      let n = c;
      while (performance.now() < until) {
        const start = performance.now();
        const res = await sys.get(url, readers[n++ % readers.length]);
        latencies.push(performance.now() - start);
        items = Object.keys((res.body.casties ?? res.body.search_results ?? {}) as object).length || ((res.body.castie_ids as unknown[] | undefined)?.length ?? 0);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { rps: latencies.length / seconds, p50: at(0.5), p95: at(0.95), items };
}

const rows: [string, Awaited<ReturnType<typeof measure>>][] = [];
for (const url of ['/api/home/following/', '/api/home/spicy/', '/api/home/new/', '/api/home/spicy/?ids=true', '/api/home/new/?limit=20', '/api/search/casties/?q=thing%20number%2012']) {
  rows.push([url, await measure(url)]);
}
await sys.close();

const fmt = (v: number, digits = 0): string => v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
console.log(`home feed through the gateway (inject), embedded profile, ${CONCURRENCY} concurrent clients, ${RUN_MS / 1000}s per row`);
console.log(`population: ${fmt(USERS)} users, ${fmt(GROUPS)} groups, ${fmt(CASTIES)} Casties over ${DAYS} days, ~${fmt(CASTIES * FORECASTS_PER_CASTIE)} forecasts, ${fmt(eventsWritten)} events`);
console.log(`generated in ${fmt(generatedMs / 1000, 1)}s; system start (replay into every read model) ${fmt(bootMs / 1000, 1)}s\n`);
console.log(['request'.padEnd(40), 'items'.padStart(6), 'req/s'.padStart(8), 'p50 ms'.padStart(8), 'p95 ms'.padStart(8)].join(' '));
for (const [url, r] of rows) console.log([url.padEnd(40), String(r.items).padStart(6), fmt(r.rps).padStart(8), fmt(r.p50, 1).padStart(8), fmt(r.p95, 1).padStart(8)].join(' '));
await rm(dataDir, { recursive: true, force: true });
