import {
  CASTIES_TOPIC,
  castieEvents,
  ErrorBodySchema,
  EventEnvelopeSchema,
  groupEvents,
  GROUPS_TOPIC,
  groupsAdminApi,
  groupsApi,
  IDENTITY_TOPIC,
  identityEvents,
  internalHeaders,
  SOCIAL_TOPIC,
  socialEvents,
  type DomainEvent,
  type Endpoint,
  type EventCatalog,
} from '@castie/contracts';
import { eachWriteAlone, ManualClock, newId, type CollectionSpec, type Doc, type DocumentStore, type EventStore, type LogRecord, type ProjectionRunner } from '@castie/platform';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import { createFileEventLog, type FileEventLog } from '@castie/platform/embedded/file-event-log';
import { createLogEventStore } from '@castie/platform/embedded/log-event-store';
import { GROUP_DELETED_USERS, GROUP_MEMBERSHIPS, GROUP_SCORES, GROUPS, groupsProjections, peopleProjections } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_HEADER } from './administration/routes.ts';
import { buildGroupsApp } from './app.ts';
import { startGroupsReadModels } from './module.ts';

// The groups service alone, through its HTTP contract (inject), on embedded adapters with a fixed
// clock. People, friendships and Casties arrive as the other services publish them: as events.
let dir: string;
let log: FileEventLog;
let documents: DocumentStore;
let runner: ProjectionRunner;
let app: FastifyInstance;
const stores = new Map<string, EventStore>();
const clock = new ManualClock(new Date('2026-03-01T12:00:00Z'));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const catalogs: Record<string, EventCatalog<any>> = { [IDENTITY_TOPIC]: identityEvents, [GROUPS_TOPIC]: groupEvents, [CASTIES_TOPIC]: castieEvents, [SOCIAL_TOPIC]: socialEvents };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'castie-groups-'));
  log = await createFileEventLog({ dir: join(dir, 'log') });
  for (const topic of Object.keys(catalogs)) stores.set(topic, await createLogEventStore({ log, topic }));
  documents = openSqliteDocumentStore({ path: join(dir, 'groups.db') });
  runner = await startGroupsReadModels({ log, documents });
  app = buildGroupsApp({ store: stores.get(GROUPS_TOPIC)!, documents, readModels: runner, clock, timeZone: 'UTC', checkResponses: true });
});
afterAll(async () => {
  await app.close();
  await runner.stop();
  await documents.close();
  for (const store of stores.values()) await store.close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

interface User {
  userId: string;
  handle: string;
  email: string;
}

/** What another service publishes: events appended to its topic (the stream's next versions). */
async function publish(topic: string, streamId: string, ...events: DomainEvent[]): Promise<string> {
  const store = stores.get(topic)!;
  const { version } = await store.readStream(streamId);
  const appended = await store.appendToStream(
    streamId,
    events.map((e) => ({ id: newId(), type: e.type, schemaVersion: 1, streamId, occurredAt: clock.now().toISOString(), actor: 'system', data: catalogs[topic]!.check(e).data })),
    { expectedVersion: version === 0 ? 'no_stream' : version },
  );
  return appended.positions.map((p) => `${p.topic}:${p.partition}:${p.offset}`).join(',');
}

let people = 0;
async function person(handle: string): Promise<User> {
  people += 1;
  const userId = newId();
  await publish(IDENTITY_TOPIC, `account-${userId}`, { type: 'AccountOpened', data: { userId } }, { type: 'ProfileNamed', data: { userId, handle, firstName: handle, lastName: `L${people}` } }, { type: 'SignUpCompleted', data: { userId, profPic: '' } });
  return { userId, handle, email: `${handle}@example.com` };
}

/** The last write of each user, sent as the gateway does so that their next read sees it. */
const sessions = new Map<string, string>();

async function call<E extends Endpoint>(endpoint: E, options: { as?: User | 'admin'; url?: string; payload?: Record<string, unknown>; target?: FastifyInstance } = {}) {
  const headers: Record<string, string> = {};
  const who = options.as;
  if (who === 'admin') headers[ADMIN_HEADER] = 'true';
  else if (who) {
    Object.assign(headers, { [internalHeaders.userId]: who.userId, [internalHeaders.handle]: who.handle, [internalHeaders.email]: who.email });
    const after = sessions.get(who.userId);
    if (after) headers[internalHeaders.after] = after;
  }
  const res = await (options.target ?? app).inject({ method: endpoint.method, url: options.url ?? endpoint.paths[0]!, headers, ...(endpoint.method === 'POST' ? { payload: options.payload ?? {} } : {}) });
  const written = res.headers[internalHeaders.written];
  if (who && who !== 'admin' && typeof written === 'string') sessions.set(who.userId, written);
  const body = res.json() as Record<string, unknown>;
  return { status: res.statusCode, body, ok: res.statusCode === 200 ? (endpoint.response.parse(body) as Record<string, unknown>) : null, error: res.statusCode === 200 ? null : ErrorBodySchema.parse(body) };
}

/** Other users' writes reach the read models within milliseconds; reads that need them wait for the log's end. */
async function caughtUp(): Promise<void> {
  const ends = [];
  for (const topic of Object.keys(catalogs)) for (const [partition, end] of await log.endOffsets(topic)) if (end > 0) ends.push({ topic, partition, offset: end - 1 });
  expect(await runner.waitFor(ends, 5000)).toBe(true);
}

const createGroup = (slug: string, fields: Record<string, unknown> = {}) =>
  call(groupsAdminApi.createGroup, { as: 'admin', payload: { slug, groupName: slug.toUpperCase(), groupInfoText: `about ${slug}`, requiresApproval: false, accessDeniedMessage: '', ...fields } });
const url = (template: string, params: Record<string, string>) => template.replace(/:(\w+)/g, (_, k: string) => params[k]!);

let ann: User, bob: User, cat: User, dan: User;

describe('groups service contract', () => {
  beforeAll(async () => {
    [ann, bob, cat, dan] = [await person('ann'), await person('bob'), await person('cat'), await person('dan')];
  });

  it('admin: creates groups, names admins and creators; refuses callers without the gateway admin header', async () => {
    expect((await createGroup('sports')).ok).toMatchObject({ group: { slug: 'sports', followersCount: 0 } });
    expect((await createGroup('insiders', { requiresApproval: true, accessDeniedMessage: 'ask dan' })).ok).not.toBeNull();
    expect((await createGroup('news', { restrictCreation: 'true' })).ok).toMatchObject({ group: { restrictCreation: true } });
    expect((await call(groupsAdminApi.nameAdmin, { as: 'admin', url: url(groupsAdminApi.nameAdmin.paths[0]!, { group_slug: 'insiders', handle: 'dan' }) })).ok).toMatchObject({ group: { admins: ['dan'] } });
    expect((await call(groupsAdminApi.nameCreator, { as: 'admin', url: url(groupsAdminApi.nameCreator.paths[0]!, { group_slug: 'news', handle: 'bob' }) })).ok).toMatchObject({ group: { creators: ['bob'] } });
    expect((await call(groupsAdminApi.createGroup, { payload: {} })).status).toBe(401);
    expect((await call(groupsAdminApi.createGroup, { as: ann, payload: {} })).status).toBe(401);
  });

  it('follow / unfollow answer per the access table; errors in the envelope', async () => {
    const followUrl = (slug: string) => url(groupsApi.follow.paths[0]!, { group_slug: slug });
    const unfollowUrl = (slug: string) => url(groupsApi.unfollow.paths[0]!, { group_slug: slug });
    for (const u of [ann, bob, cat]) expect((await call(groupsApi.follow, { as: u, url: followUrl('sports') })).ok).toMatchObject({ following: true, access: null });
    for (const u of [ann, bob]) expect((await call(groupsApi.follow, { as: u, url: followUrl('news') })).ok).toMatchObject({ following: true });
    expect((await call(groupsApi.follow, { as: ann, url: followUrl('sports') })).error).toEqual({ status: 400, error_type: 'improper_group_request', error_message: 'cannot follow the Group. user is already following', handle: 'ann', group_slug: 'sports' });
    expect((await call(groupsApi.unfollow, { as: cat, url: unfollowUrl('sports') })).ok).toMatchObject({ following: false, access: null });
    expect((await call(groupsApi.unfollow, { as: cat, url: unfollowUrl('sports') })).error).toMatchObject({ error_type: 'improper_group_request', error_message: 'cannot un-follow the Group. user does not follow it yet' });
    for (const u of [ann, bob]) expect((await call(groupsApi.follow, { as: u, url: followUrl('insiders') })).ok).toMatchObject({ following: false, access: 'pending', access_pending: 'user has requested access to group' });
    expect((await call(groupsApi.follow, { as: ann, url: followUrl('missing') })).error).toMatchObject({ status: 404, error_type: 'object_not_found' });
  });

  it('group admins list, approve and deny requests; others get 404', async () => {
    const requestsUrl = url(groupsApi.requests.paths[0]!, { group_slug: 'insiders' });
    await caughtUp();
    expect((await call(groupsApi.requests, { as: ann, url: requestsUrl })).status).toBe(404);
    expect((await call(groupsApi.requests, { as: dan, url: requestsUrl })).ok).toMatchObject({ number_requests: 2 });
    expect((await call(groupsApi.approveRequest, { as: dan, url: url(groupsApi.approveRequest.paths[0]!, { group_slug: 'insiders', handle: 'bob' }) })).ok).toMatchObject({ handle: 'bob', access: 'granted', following: true });
    expect((await call(groupsApi.denyRequest, { as: dan, url: url(groupsApi.denyRequest.paths[0]!, { group_slug: 'insiders', handle: 'ann' }) })).ok).toMatchObject({ handle: 'ann', access: null, following: false });
    const granted = (await stores.get(GROUPS_TOPIC)!.readStream(`membership-insiders-${bob.userId}`)).events.map((e) => [e.type, e.data]);
    expect(granted).toEqual([
      ['GroupAccessRequested', { slug: 'insiders', userId: bob.userId }],
      ['GroupAccessGranted', { slug: 'insiders', userId: bob.userId, grantedBy: dan.userId }],
    ]);
  });

  it('Group objects count followers, frodads who follow, Casties and accuracy (from other topics)', async () => {
    const pair = [ann.userId, bob.userId].sort().join('-');
    await publish(SOCIAL_TOPIC, `frodads-${pair}`, { type: 'FrodadRequested', data: { fromId: ann.userId, toId: bob.userId } }, { type: 'FrodadRequestAccepted', data: { fromId: ann.userId, toId: bob.userId } });
    const c1 = newId();
    const at = clock.now().toISOString();
    await publish(CASTIES_TOPIC, `castie-${c1}`, {
      type: 'CastieCreated',
      data: { castieId: c1, groupSlug: 'sports', creatorId: cat.userId, question: 'q', showUsername: true, allowWriteIn: true, options: [], endsAt: null, endDate: null, endTime: null, createdAt: at },
    });
    const last = await publish(CASTIES_TOPIC, `castie-${c1}`, {
      type: 'CastieAnswered',
      data: { castieId: c1, groupSlug: 'sports', correctAnswerId: null, correctText: 'x', answeredAt: at, scores: [{ userId: ann.userId, forecastId: 1, correct: true, points: 55 }] },
    });
    sessions.set(ann.userId, last);
    await caughtUp();
    const groups = (await call(groupsApi.listGroups, { as: ann })).ok!.groups as Record<string, Record<string, unknown>>;
    expect(groups.sports).toMatchObject({ followersCount: 2, friendsCount: 1, numberCasties: 1, accuracy: 100, following: true, canCreateCastie: true });
    expect(groups.insiders).toMatchObject({ followersCount: 1, friendsCount: 1, access: null, following: false, accessDeniedMessage: 'ask dan' });
    expect(groups.news).toMatchObject({ canCreateCastie: false });
  });

  it('answers every read endpoint within its contract', async () => {
    for (const [endpoint, path] of [
      [groupsApi.listGroups, '/api/groups/'],
      [groupsApi.hamburger, '/api/hamburger/'],
      [groupsApi.createCastieGroups, '/api/casties/create/groups/'],
      [groupsApi.searchGroups, '/api/search/groups/?q=s'],
      [groupsApi.followers, '/api/groups/sports/followers/'],
      [groupsApi.friendFollowers, '/api/groups/sports/followers/frodads/'],
      [groupsApi.profileGroups, '/api/profile/bob/groups/'],
      [groupsApi.profileGroups, '/api/profile/bob/groups/?slugs_only=1'],
    ] as const) {
      const res = await call(endpoint, { as: ann, url: path });
      expect(res.ok, `${path}: ${JSON.stringify(res.body)}`).not.toBeNull();
    }
    expect((await call(groupsApi.hamburger, { as: bob })).ok).toEqual({ status: 200, handle: 'bob', groups: [['INSIDERS', 'insiders'], ['NEWS', 'news'], ['SPORTS', 'sports']] });
    expect((await call(groupsApi.createCastieGroups, { as: ann })).ok).toEqual({ status: 200, groups: [['SPORTS', 'sports']] });
  });
});

describe('groups read model: at-least-once delivery', () => {
  /** Every record of the topics the service reads, as the log holds them now. */
  async function allRecords(): Promise<LogRecord[]> {
    const topics = Object.keys(catalogs);
    const records: LogRecord[] = [];
    const sub = await log.subscribe({ group: `dump-${newId()}`, topics, startAt: () => 'earliest', handle: async (batch) => void records.push(...batch) });
    const ends = [];
    for (const topic of topics) for (const [partition, end] of await log.endOffsets(topic)) if (end > 0) ends.push({ topic, partition, offset: end - 1 });
    expect(await sub.waitFor(ends, 10_000)).toBe(true);
    await sub.stop();
    return records;
  }

  it('rebuilding by applying every event twice gives the same read model and the same answers', async () => {
    // One more deletion so the identity side of the projection is exercised too.
    const gone = await person('eve');
    await call(groupsApi.follow, { as: gone, url: '/api/groups/sports/follow/' });
    const last = await publish(IDENTITY_TOPIC, `account-${gone.userId}`, { type: 'AccountDeleted', data: { userId: gone.userId, handle: 'eve' } });
    sessions.set(ann.userId, last);
    await call(groupsApi.listGroups, { as: ann });

    const records = await allRecords();
    expect(records.length).toBeGreaterThan(30);
    const rebuilt = openSqliteDocumentStore({ path: ':memory:' });
    const projections = [...peopleProjections(), ...groupsProjections()];
    for (const record of records) {
      const envelope = EventEnvelopeSchema.parse(JSON.parse(record.value));
      const event = catalogs[record.topic]!.parse(envelope) as DomainEvent;
      for (let time = 0; time < 2; time++) for (const p of projections) if (p.topics.includes(record.topic)) await p.apply(event, envelope, record, eachWriteAlone(rebuilt));
    }

    // `_applied` is delivery bookkeeping (which offsets a document saw): it depends on the order in
    // which topics interleave, the content does not.
    const contents = async <T extends Doc>(store: DocumentStore, spec: CollectionSpec<T>) =>
      (await store.collection(spec).find({})).map(({ _applied: _marks, ...doc }) => doc).sort((a, b) => (a._id < b._id ? -1 : 1));
    const dump = async (store: DocumentStore) => [await contents(store, GROUPS), await contents(store, GROUP_MEMBERSHIPS), await contents(store, GROUP_SCORES), await contents(store, GROUP_DELETED_USERS)];
    expect(await dump(rebuilt)).toEqual(await dump(documents));

    const twin = buildGroupsApp({ store: stores.get(GROUPS_TOPIC)!, documents: rebuilt, readModels: { waitFor: async () => true, catchUp: async () => true }, clock, timeZone: 'UTC', checkResponses: true });
    try {
      const reads = [
        [groupsApi.listGroups, '/api/groups/'],
        [groupsApi.hamburger, '/api/hamburger/'],
        [groupsApi.createCastieGroups, '/api/casties/create/groups/'],
        [groupsApi.searchGroups, '/api/search/groups/?q='],
        [groupsApi.followers, '/api/groups/sports/followers/'],
        [groupsApi.friendFollowers, '/api/groups/insiders/followers/frodads/'],
        [groupsApi.profileGroups, '/api/profile/ann/groups/'],
        [groupsApi.requests, '/api/groups/insiders/requests/'],
      ] as const;
      let compared = 0;
      for (const user of [ann, bob, cat, dan]) {
        for (const [endpoint, path] of reads) {
          const live = await call(endpoint, { as: user, url: path });
          const again = await call(endpoint, { as: user, url: path, target: twin });
          expect(again.body, `${user.handle} ${path}`).toEqual(live.body);
          if (live.status === 200) compared += 1;
        }
      }
      expect(compared).toBeGreaterThanOrEqual(29);
      // And the numbers are the right ones, not merely stable: eve no longer counts.
      expect(((await call(groupsApi.listGroups, { as: ann, target: twin })).ok!.groups as Record<string, { followersCount: number }>).sports!.followersCount).toBe(2);
    } finally {
      await twin.close();
    }
  });
});
