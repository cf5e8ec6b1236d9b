import { CASTIES_TOPIC, GROUPS_TOPIC, IDENTITY_TOPIC, SOCIAL_TOPIC, type CastieEvent, type DomainEvent, type EventEnvelope, type GroupEvent, type IdentityEvent, type SocialEvent } from '@castie/contracts';
import { eachWriteAlone, type CollectionSpec, type Doc, type DocumentStore, type LogRecord, type Projection } from '@castie/platform';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import { describe, expect, it } from 'vitest';
import { groupsProjections, peopleProjections } from '../index.ts';
import { GroupDirectory } from './group-directory.ts';
import { GROUP_DELETED_USERS, GROUP_MEMBERSHIPS, GROUP_SCORES, GROUPS } from './groups-projection.ts';

const id = (c: string) => c.repeat(32);
const [ann, bob, cat, dan] = [id('a'), id('b'), id('c'), id('d')];
const at = '2026-03-01T12:00:00.000Z';

type Topic = typeof GROUPS_TOPIC | typeof CASTIES_TOPIC | typeof IDENTITY_TOPIC | typeof SOCIAL_TOPIC;
interface Logged {
  event: DomainEvent;
  envelope: EventEnvelope;
  record: LogRecord;
}

/** An append-only log of events as the runner would deliver them (one partition per topic). */
class Log {
  readonly records: Logged[] = [];
  readonly #offsets = new Map<string, number>();
  readonly #versions = new Map<string, number>();
  add(topic: Topic, streamOf: (data: Record<string, string>) => string, ...events: DomainEvent[]): this {
    for (const event of events) {
      const offset = this.#offsets.get(topic) ?? 0;
      this.#offsets.set(topic, offset + 1);
      const stream = streamOf(event.data as Record<string, string>);
      const version = (this.#versions.get(stream) ?? 0) + 1;
      this.#versions.set(stream, version);
      const envelope: EventEnvelope = { id: `${topic}-${offset}`, type: event.type, schemaVersion: 1, streamId: stream, streamVersion: version, occurredAt: at, actor: 'test', data: event.data };
      this.records.push({ event, envelope, record: { topic, partition: 0, offset, key: stream, value: JSON.stringify(envelope), timestamp: 0 } });
    }
    return this;
  }
  groups(...events: GroupEvent[]) {
    return this.add(GROUPS_TOPIC, (d) => (d.userId && !d.groupName ? `membership-${d.slug}-${d.userId}` : `group-${d.slug}`), ...events);
  }
  casties(...events: CastieEvent[]) {
    return this.add(CASTIES_TOPIC, (d) => `castie-${d.castieId}`, ...events);
  }
  identity(...events: IdentityEvent[]) {
    return this.add(IDENTITY_TOPIC, (d) => `account-${d.userId}`, ...events);
  }
  social(...events: SocialEvent[]) {
    return this.add(SOCIAL_TOPIC, (d) => `frodads-${[d.fromId ?? d.byId, d.toId ?? d.otherId].sort().join('-')}`, ...events);
  }
}

async function project(log: Log, options: { times?: number; order?: (records: Logged[]) => Logged[] } = {}): Promise<{ store: DocumentStore; dir: GroupDirectory }> {
  const store = openSqliteDocumentStore({ path: ':memory:' });
  const projections: Projection[] = [...peopleProjections(), ...groupsProjections()];
  for (const r of (options.order ?? ((x) => x))(log.records)) {
    for (let i = 0; i < (options.times ?? 1); i++) {
      for (const p of projections) if (p.topics.includes(r.record.topic)) await p.apply(r.event, r.envelope, r.record, eachWriteAlone(store));
    }
  }
  return { store, dir: new GroupDirectory(store) };
}

const person = (userId: string, handle: string): IdentityEvent[] => [
  { type: 'AccountOpened', data: { userId } },
  { type: 'ProfileNamed', data: { userId, handle, firstName: handle, lastName: 'X' } },
  { type: 'SignUpCompleted', data: { userId, profPic: '' } },
];
const group = (slug: string, extra: Partial<Extract<GroupEvent, { type: 'GroupCreated' }>['data']> = {}): GroupEvent => ({
  type: 'GroupCreated',
  data: { slug, groupName: slug.toUpperCase(), groupInfoText: `about ${slug}`, groupIcon: '', requiresApproval: false, accessDeniedMessage: '', restrictCreation: false, ...extra },
});
const castie = (castieId: string, groupSlug: string): CastieEvent => ({
  type: 'CastieCreated',
  data: { castieId, groupSlug, creatorId: ann, question: 'q?', showUsername: true, allowWriteIn: true, options: [], endsAt: null, endDate: null, endTime: null, createdAt: at },
});
const answered = (castieId: string, groupSlug: string, scores: { userId: string; correct: boolean }[]): CastieEvent => ({
  type: 'CastieAnswered',
  data: { castieId, groupSlug, correctAnswerId: null, correctText: 'x', answeredAt: at, scores: scores.map((s, i) => ({ ...s, forecastId: i + 1, points: s.correct ? 50 : 0 })) },
});

/** A small world: four people, a public group, an approval-required one, a restricted one, Casties and scores. */
function world(): Log {
  return new Log()
    .identity(...person(ann, 'ann'), ...person(bob, 'bob'), ...person(cat, 'cat'), ...person(dan, 'dan'))
    .groups(
      group('sports'),
      group('insiders', { requiresApproval: true, accessDeniedMessage: '<b>ask first</b>' }),
      group('news', { restrictCreation: true }),
      { type: 'GroupAdminNamed', data: { slug: 'insiders', userId: dan } },
      { type: 'GroupCreatorNamed', data: { slug: 'news', userId: bob } },
      { type: 'GroupFollowed', data: { slug: 'sports', userId: ann } },
      { type: 'GroupFollowed', data: { slug: 'sports', userId: bob } },
      { type: 'GroupFollowed', data: { slug: 'sports', userId: cat } },
      { type: 'GroupFollowed', data: { slug: 'news', userId: ann } },
      { type: 'GroupFollowed', data: { slug: 'news', userId: bob } },
      { type: 'GroupAccessRequested', data: { slug: 'insiders', userId: ann } },
      { type: 'GroupAccessRequested', data: { slug: 'insiders', userId: bob } },
      { type: 'GroupAccessGranted', data: { slug: 'insiders', userId: bob, grantedBy: dan } },
      { type: 'GroupUnfollowed', data: { slug: 'sports', userId: cat } },
    )
    .social({ type: 'FrodadRequested', data: { fromId: ann, toId: bob } }, { type: 'FrodadRequestAccepted', data: { fromId: ann, toId: bob } })
    .casties(
      castie(id('1'), 'sports'),
      castie(id('2'), 'sports'),
      castie(id('3'), 'insiders'),
      answered(id('1'), 'sports', [
        { userId: ann, correct: true },
        { userId: bob, correct: false },
      ]),
      answered(id('2'), 'sports', [{ userId: ann, correct: false }]),
    );
}

describe('GroupDirectory: the Group object for a requester', () => {
  it('counts followers, friends who follow, Casties, and the requester accuracy', async () => {
    const { dir } = await project(world());
    expect(await dir.groupObject(ann, 'sports')).toEqual({
      slug: 'sports',
      groupName: 'SPORTS',
      groupInfoText: 'about sports',
      groupIcon: '',
      requiresApproval: false,
      accessDeniedMessage: '',
      followersCount: 2,
      friendsCount: 1,
      accuracy: 50,
      access: null,
      following: true,
      canCreateCastie: true,
      numberCasties: 2,
    });
    // cat unfollowed; no answered forecasts in the group: accuracy null.
    expect(await dir.groupObject(cat, 'sports')).toMatchObject({ following: false, access: null, canCreateCastie: false, accuracy: null, friendsCount: 0 });
    expect(await dir.groupObject(bob, 'sports')).toMatchObject({ accuracy: 0, friendsCount: 1 });
  });

  it('counts the frodads who follow alike for one group and for a listing of many', async () => {
    // ann with 45 frodads and 45 groups: a listing of all of them (over 2,000 group-frodad pairs)
    // reads the frodads' memberships by user, one group's page by membership id.
    const friends = Array.from({ length: 45 }, (_, i) => id(`${i}`.padStart(2, '0')).slice(0, 32));
    const slugs = Array.from({ length: 45 }, (_, i) => `g${i}`);
    const log = new Log().identity(...person(ann, 'ann'), ...friends.flatMap((f, i) => person(f, `friend${i}`)));
    log.groups(...slugs.map((slug) => group(slug)));
    // Frodad i follows the first i groups; frodads 1-9 then unfollow g0; frodad 3 asks for g44 (not following it).
    log.groups(...friends.flatMap((f, i) => slugs.slice(0, i).map((slug): GroupEvent => ({ type: 'GroupFollowed', data: { slug, userId: f } }))));
    log.groups(...friends.slice(0, 10).map((f): GroupEvent => ({ type: 'GroupUnfollowed', data: { slug: 'g0', userId: f } })));
    log.groups({ type: 'GroupAccessRequested', data: { slug: 'g44', userId: friends[3]! } });
    log.social(...friends.flatMap((f): SocialEvent[] => [{ type: 'FrodadRequested', data: { fromId: ann, toId: f } }, { type: 'FrodadRequestAccepted', data: { fromId: ann, toId: f } }]));
    const { dir } = await project(log);
    const listing = await dir.groupObjects(ann, await dir.all());
    // Group g<k> is followed by frodads k+1..44: 44 - k of them, less the nine who left g0.
    const expected = (k: number) => 44 - k - (k === 0 ? 9 : 0);
    for (const k of [0, 1, 20, 43, 44]) {
      expect(listing[`g${k}`]?.friendsCount, `listing, g${k}`).toBe(expected(k));
      expect((await dir.groupObject(ann, `g${k}`)).friendsCount, `page of g${k}`).toBe(expected(k));
    }
  });

  it('shows pending and granted access on an approval-required group', async () => {
    const { dir } = await project(world());
    expect(await dir.groupObject(ann, 'insiders')).toMatchObject({ following: false, access: 'pending', followersCount: 1, canCreateCastie: false, accessDeniedMessage: '<b>ask first</b>', numberCasties: 1 });
    expect(await dir.groupObject(bob, 'insiders')).toMatchObject({ following: true, access: 'granted', canCreateCastie: true });
    expect(await dir.groupObject(null, 'insiders')).toMatchObject({ following: false, access: null, canCreateCastie: false, friendsCount: 0, accuracy: null });
    expect(await dir.pendingOf('insiders')).toEqual([{ userId: ann, requestedAt: at }]);
  });

  it('answers unknown groups with 404 object_not_found', async () => {
    const { dir } = await project(world());
    expect(await dir.bySlug('nope')).toBeNull();
    await expect(dir.groupObject(ann, 'nope')).rejects.toMatchObject({ errorType: 'object_not_found', message: 'the requested group could not be found', status: 404 });
  });

  it('batches many groups into objects indexed by slug', async () => {
    const { dir } = await project(world());
    const objects = await dir.groupObjects(ann, await dir.all());
    expect(Object.keys(objects).sort()).toEqual(['insiders', 'news', 'sports']);
    expect(objects.news).toMatchObject({ following: true, canCreateCastie: false });
  });
});

describe('GroupDirectory: who may create and see', () => {
  it('lets followers create unless creation is restricted to named creators (and admins)', async () => {
    const { dir } = await project(world());
    expect(await dir.canCreate(ann, 'sports')).toBe(true);
    expect(await dir.canCreate(cat, 'sports')).toBe(false);
    expect(await dir.canCreate(ann, 'news')).toBe(false);
    expect(await dir.canCreate(bob, 'news')).toBe(true);
    expect(await dir.canCreate(ann, 'nope')).toBe(false);
    expect((await dir.creatableGroups(bob)).map((g) => g.slug)).toEqual(['insiders', 'news', 'sports']);
    expect((await dir.creatableGroups(ann)).map((g) => g.slug)).toEqual(['sports']);
  });

  it('hides approval-required groups from everyone but granted followers', async () => {
    const { dir } = await project(world());
    expect((await dir.visibleSlugsFor(ann)).sort()).toEqual(['news', 'sports']);
    expect((await dir.visibleSlugsFor(bob)).sort()).toEqual(['insiders', 'news', 'sports']);
    expect(await dir.hiddenSlugsFor(ann)).toEqual(['insiders']);
    expect(await dir.hiddenSlugsFor(bob)).toEqual([]);
    expect(await dir.canSee(ann, 'insiders')).toBe(false);
    expect(await dir.canSee(bob, 'insiders')).toBe(true);
    expect(await dir.canSee(dan, 'insiders')).toBe(false);
    expect(await dir.isAdmin(dan, 'insiders')).toBe(true);
    expect(await dir.isAdmin(ann, 'insiders')).toBe(false);
  });

  it('lists followed groups alphabetically, and followers', async () => {
    const { dir } = await project(world());
    expect((await dir.followedGroups(bob)).map((g) => g.groupName)).toEqual(['INSIDERS', 'NEWS', 'SPORTS']);
    expect((await dir.followerIds('sports')).sort()).toEqual([ann, bob].sort());
    expect(await dir.namesOf(['news', 'nope'])).toEqual(new Map([['news', 'NEWS']]));
    expect(await dir.membership(ann, 'insiders')).toEqual({ following: false, access: 'pending' });
  });
});

const configured = (data: Omit<Extract<GroupEvent, { type: 'GroupConfigured' }>['data'], 'slug'>, slug = 'sports'): GroupEvent => ({ type: 'GroupConfigured', data: { slug, ...data } });

describe('groups projection: operators configure a group', () => {

  it('shows the new settings and keeps the others, its followers and counts', async () => {
    const { dir } = await project(world().groups(configured({ groupName: 'athletics', groupIcon: '/media/uploads/new.png' })));
    expect(await dir.groupObject(ann, 'sports')).toMatchObject({ groupName: 'athletics', groupIcon: '/media/uploads/new.png', groupInfoText: 'about sports', followersCount: 2, numberCasties: 2, following: true });
    // Alphabetical lists go by the new name.
    expect((await dir.followedGroups(bob)).map((g) => g.groupName)).toEqual(['athletics', 'INSIDERS', 'NEWS']);
    expect(await dir.namesOf(['sports'])).toEqual(new Map([['sports', 'athletics']]));
  });

  it('opens an approval-required group to everyone once approval is switched off', async () => {
    const { dir } = await project(world().groups(configured({ requiresApproval: false }, 'insiders')));
    expect(await dir.canSee(cat, 'insiders')).toBe(true);
    expect(await dir.hiddenSlugsFor(cat)).toEqual([]);
    // A request still pending stays what it was (the groups service grants those, as events).
    expect(await dir.groupObject(ann, 'insiders')).toMatchObject({ requiresApproval: false, access: 'pending', following: false });
  });

  it('keeps the followers of a public group in when approval is switched on, as granted; others no longer see it', async () => {
    const { dir } = await project(world().groups(configured({ requiresApproval: true })));
    expect(await dir.groupObject(ann, 'sports')).toMatchObject({ requiresApproval: true, following: true, access: 'granted' });
    expect(await dir.canSee(ann, 'sports')).toBe(true);
    expect(await dir.canSee(cat, 'sports')).toBe(false);
    expect((await dir.hiddenSlugsFor(cat)).sort()).toEqual(['insiders', 'sports']);
  });

  it('restricts creation to named creators once switched on', async () => {
    const { dir } = await project(world().groups(configured({ restrictCreation: true })));
    expect(await dir.canCreate(ann, 'sports')).toBe(false);
    expect(await dir.groupObject(ann, 'sports')).toMatchObject({ canCreateCastie: false });
  });
});

describe('groups projection: deleted accounts and delivery order', () => {
  const deleteBob: IdentityEvent = { type: 'AccountDeleted', data: { userId: bob, handle: 'bob' } };

  it('stops counting a deleted account as a follower or a friend', async () => {
    const { dir } = await project(world().identity(deleteBob));
    expect(await dir.groupObject(ann, 'sports')).toMatchObject({ followersCount: 1, friendsCount: 0 });
    expect(await dir.groupObject(ann, 'insiders')).toMatchObject({ followersCount: 0 });
  });

  it('counts the same whether the deletion is applied before or after the follows (topics replay independently)', async () => {
    const log = world().identity(deleteBob);
    const identityFirst = (records: Logged[]) => [...records.filter((r) => r.record.topic === IDENTITY_TOPIC), ...records.filter((r) => r.record.topic !== IDENTITY_TOPIC)];
    const castiesFirst = (records: Logged[]) => [...records.filter((r) => r.record.topic === CASTIES_TOPIC), ...records.filter((r) => r.record.topic !== CASTIES_TOPIC)];
    const inOrder = await project(log);
    for (const order of [identityFirst, castiesFirst]) {
      const other = await project(log, { order });
      expect(await other.dir.groupObjects(ann, await other.dir.all())).toEqual(await inOrder.dir.groupObjects(ann, await inOrder.dir.all()));
    }
  });
});

describe('groups projection: at-least-once delivery', () => {
  const all = async <T extends Doc>(store: DocumentStore, spec: CollectionSpec<T>) => (await store.collection(spec).find({})).sort((a, b) => (a._id < b._id ? -1 : 1));
  const dump = async (store: DocumentStore) => ({
    groups: await all(store, GROUPS),
    memberships: await all(store, GROUP_MEMBERSHIPS),
    scores: await all(store, GROUP_SCORES),
    deleted: await all(store, GROUP_DELETED_USERS),
  });

  it('redelivering every event twice leaves the read model and every answer unchanged', async () => {
    const log = world()
      .identity({ type: 'AccountDeleted', data: { userId: cat, handle: 'cat' } })
      .groups(configured({ groupName: 'Athletics', groupInfoText: 'run' }));
    const once = await project(log);
    const twice = await project(log, { times: 2 });
    expect(await dump(twice.store)).toEqual(await dump(once.store));
    for (const user of [ann, bob, cat, dan]) {
      expect(await twice.dir.groupObjects(user, await twice.dir.all())).toEqual(await once.dir.groupObjects(user, await once.dir.all()));
      expect(await twice.dir.visibleSlugsFor(user)).toEqual(await once.dir.visibleSlugsFor(user));
    }
    // And the counts are the right ones, not merely stable.
    expect(await twice.dir.groupObject(ann, 'sports')).toMatchObject({ followersCount: 2, numberCasties: 2, accuracy: 50 });
  });

  it('redelivering a whole earlier stretch after later events changes nothing', async () => {
    const log = world();
    const once = await project(log);
    const replayed = await project(log, { order: (records) => [...records, ...records.slice(records.length - 12)] });
    expect(await dump(replayed.store)).toEqual(await dump(once.store));
  });
});
