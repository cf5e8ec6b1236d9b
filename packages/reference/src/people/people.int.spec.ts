import { CASTIES_TOPIC, DomainError, GROUPS_TOPIC, IDENTITY_TOPIC, SOCIAL_TOPIC, type CastieEvent, type DomainEvent, type EventEnvelope, type GroupEvent, type IdentityEvent, type SocialEvent } from '@castie/contracts';
import { eachWriteAlone, type DocumentStore, type LogRecord, type Projection } from '@castie/platform';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import { describe, expect, it } from 'vitest';
import { peopleProjections } from '../index.ts';
import { FRIENDSHIPS } from './friendships-projection.ts';
import { PEOPLE } from './people-projection.ts';
import { People } from './people.ts';

// Given a history of events on the four topics, when the projections apply it (once, twice, out of
// turn), then the People queries answer what a user of the app would expect.

const id = (c: string) => c.repeat(32);
const [ada, bob, cyd, dan, eve] = ['a', 'b', 'c', 'd', 'e'].map(id) as [string, string, string, string, string];
const castie = id('f');
const at = '2026-03-01T12:00:00.000Z';

type Delivery = { event: DomainEvent; envelope: EventEnvelope; record: LogRecord };

/**
 * Stamps events as the log would deliver them: offsets per topic, versions per stream, both
 * continuing after an earlier history when one is given.
 */
function history(events: readonly { topic: string; stream: string; event: IdentityEvent | GroupEvent | CastieEvent | SocialEvent }[], after: readonly Delivery[] = []): Delivery[] {
  const offsets = new Map<string, number>();
  const versions = new Map<string, number>();
  for (const d of after) {
    offsets.set(d.record.topic, d.record.offset + 1);
    versions.set(d.envelope.streamId, d.envelope.streamVersion);
  }
  return events.map(({ topic, stream, event }, n) => {
    const i = after.length + n;
    const offset = offsets.get(topic) ?? 0;
    offsets.set(topic, offset + 1);
    const streamVersion = (versions.get(stream) ?? 0) + 1;
    versions.set(stream, streamVersion);
    const occurredAt = new Date(Date.parse(at) + i * 1000).toISOString();
    const envelope: EventEnvelope = { id: `${i}`.padStart(32, '0'), type: event.type, schemaVersion: 1, streamId: stream, streamVersion, occurredAt, actor: 'test', data: event.data };
    return { event, envelope, record: { topic, partition: 0, offset, key: stream, value: JSON.stringify(envelope), timestamp: 0 } };
  });
}

const identity = (event: IdentityEvent) => ({ topic: IDENTITY_TOPIC, stream: `account-${(event.data as { userId: string }).userId}`, event });
const groups = (event: GroupEvent) => ({ topic: GROUPS_TOPIC, stream: `membership-${event.data.slug}-${'userId' in event.data ? event.data.userId : ''}`, event });
const casties = (event: CastieEvent, stream = `castie-${castie}`) => ({ topic: CASTIES_TOPIC, stream, event });
const social = (a: string, b: string, event: SocialEvent) => ({ topic: SOCIAL_TOPIC, stream: `frodads-${[a, b].sort().join('-')}`, event });

const signUp = (userId: string, handle: string, firstName: string, lastName: string) => [
  identity({ type: 'AccountOpened', data: { userId } }),
  identity({ type: 'ProfileNamed', data: { userId, handle, firstName, lastName } }),
  identity({ type: 'SignUpCompleted', data: { userId, profPic: '' } }),
];

/** A small world: five people, groups, Casties, and every kind of friendship event. */
const world = history([
  ...signUp(ada, 'Ada', 'Ada', 'Lovelace'),
  ...signUp(bob, 'bob', 'Bob', 'Babbage'),
  ...signUp(cyd, 'cyd', 'Cyd', 'Charisse'),
  ...signUp(dan, 'dan', 'Dan', 'Dare'),
  identity({ type: 'AccountOpened', data: { userId: eve } }),
  identity({ type: 'ProfileNamed', data: { userId: eve, handle: 'eve', firstName: 'Eve', lastName: 'Quit' } }),
  identity({ type: 'SignUpAbandoned', data: { userId: eve } }),
  identity({ type: 'ProfileEdited', data: { userId: ada, city: 'London', lastName: 'King' } }),
  identity({ type: 'ProfilePictureChanged', data: { userId: ada, profPic: '/media/uploads/ada.png', changedAt: '2026-02-03T04:05:06.789Z' } }),
  identity({ type: 'PrivacyChanged', data: { userId: bob, isPrivate: true } }),
  groups({ type: 'GroupFollowed', data: { slug: 'math', userId: ada } }),
  groups({ type: 'GroupFollowed', data: { slug: 'poetry', userId: ada } }),
  groups({ type: 'GroupAccessRequested', data: { slug: 'secret', userId: ada } }),
  groups({ type: 'GroupAccessGranted', data: { slug: 'secret', userId: ada, grantedBy: 'admin' } }),
  groups({ type: 'GroupUnfollowed', data: { slug: 'poetry', userId: ada } }),
  casties({
    type: 'CastieCreated',
    data: { castieId: castie, groupSlug: 'math', creatorId: ada, question: 'Q?', showUsername: true, allowWriteIn: false, options: [{ answerId: 1, text: 'yes' }, { answerId: 2, text: 'no' }], endsAt: null, endDate: null, endTime: null, createdAt: at },
  }),
  casties({ type: 'ForecastPlaced', data: { castieId: castie, groupSlug: 'math', userId: ada, forecastId: 1, answerId: 1, text: 'yes', placedAt: at } }, `forecast-${castie}-${ada}`),
  casties({ type: 'ForecastPlaced', data: { castieId: castie, groupSlug: 'math', userId: bob, forecastId: 2, answerId: 2, text: 'no', placedAt: at } }, `forecast-${castie}-${bob}`),
  casties({
    type: 'CastieAnswered',
    data: { castieId: castie, groupSlug: 'math', correctAnswerId: 1, correctText: 'yes', answeredAt: at, scores: [{ userId: ada, forecastId: 1, correct: true, points: 150 }, { userId: bob, forecastId: 2, correct: false, points: 0 }] },
  }),
  // ada and bob: friends. ada -> cyd: pending. dan -> ada: rejected, then asked again (pending).
  social(ada, bob, { type: 'FrodadRequested', data: { fromId: ada, toId: bob } }),
  social(ada, bob, { type: 'FrodadRequestAccepted', data: { fromId: ada, toId: bob } }),
  social(ada, cyd, { type: 'FrodadRequested', data: { fromId: ada, toId: cyd } }),
  social(ada, dan, { type: 'FrodadRequested', data: { fromId: dan, toId: ada } }),
  social(ada, dan, { type: 'FrodadRequestRejected', data: { fromId: dan, toId: ada } }),
  social(ada, dan, { type: 'FrodadRequested', data: { fromId: dan, toId: ada } }),
  // bob and cyd were friends, then cyd ended it.
  social(bob, cyd, { type: 'FrodadRequested', data: { fromId: bob, toId: cyd } }),
  social(bob, cyd, { type: 'FrodadRequestAccepted', data: { fromId: bob, toId: cyd } }),
  social(bob, cyd, { type: 'FrodadRemoved', data: { byId: cyd, otherId: bob } }),
]);

async function project(deliveries: readonly Delivery[], store: DocumentStore = openSqliteDocumentStore({ path: ':memory:' })): Promise<DocumentStore> {
  const projections: Projection[] = peopleProjections();
  for (const d of deliveries) for (const p of projections) if (p.topics.includes(d.record.topic)) await p.apply(d.event, d.envelope, d.record, eachWriteAlone(store));
  return store;
}

async function dump(store: DocumentStore) {
  const byId = (a: { _id: string }, b: { _id: string }) => a._id.localeCompare(b._id);
  return { people: (await store.collection(PEOPLE).find({})).sort(byId), friendships: (await store.collection(FRIENDSHIPS).find({})).sort(byId) };
}

describe('people projections are idempotent (rule 5)', () => {
  it('every event applied twice in a row gives the same documents as once', async () => {
    const once = await dump(await project(world));
    const twice = await dump(await project(world.flatMap((d) => [d, d])));
    expect(once.people.length).toBe(5);
    expect(twice).toEqual(once);
  });

  it('replaying the whole log again (a lost checkpoint) changes nothing', async () => {
    const once = await dump(await project(world));
    expect(await dump(await project([...world, ...world]))).toEqual(once);
  });

  it('an old event delivered again after newer ones changes nothing', async () => {
    const once = await dump(await project(world));
    // Each event of the history, redelivered alone after the whole history.
    for (const d of world) {
      const store = await project(world);
      await project([d], store);
      expect(await dump(store), `${d.event.type} on ${d.envelope.streamId}`).toEqual(once);
    }
  });

  it('an ended friendship does not come back when its request is redelivered', async () => {
    const store = await project(world);
    const request = world.find((d) => d.event.type === 'FrodadRequested' && d.envelope.streamId.includes(cyd) && d.envelope.streamId.includes(bob))!;
    const accepted = world.find((d) => d.event.type === 'FrodadRequestAccepted' && d.envelope.streamId.includes(cyd))!;
    await project([request, accepted], store);
    expect(await new People(store).relation(bob, cyd)).toBe('not-friends');
  });
});

describe('profile counts', () => {
  it('counts Casties, followed groups, active frodads and forecasts; level, title and accuracy from scores', async () => {
    const people = new People(await project(world));
    const { info } = await people.profileInfo(bob, 'ada');
    expect(info).toEqual({
      handle: 'Ada',
      user_uuid: ada,
      firstName: 'Ada',
      lastName: 'King',
      city: 'London',
      state: '',
      profPic: '/media/uploads/ada.png',
      image_last_updated_date: '2026-02-03',
      image_last_updated_time: '04:05:06.789000',
      level: 2,
      adjective: 'rookie',
      noun: 'prophet',
      is_private: false,
      percentCorrect: 100,
      myCastiesNumber: 1,
      groupsNumber: 2,
      frodadsNumber: 1,
      forecastsNumber: 1,
      friend_status: 'friend',
    });
    const bobInfo = (await people.profileInfo(bob, 'BOB')).info;
    expect(bobInfo).toMatchObject({ is_private: true, percentCorrect: 0, forecastsNumber: 1, myCastiesNumber: 0, groupsNumber: 0, frodadsNumber: 1, level: 1, noun: 'benchwarmer', friend_status: 'self', image_last_updated_date: null });
  });

  it('a deleted frodad no longer counts, and the deleted person is inactive', async () => {
    const store = await project(world);
    await project(history([identity({ type: 'AccountDeleted', data: { userId: bob, handle: 'bob' } })], world), store);
    const people = new People(store);
    expect((await people.profileInfo(ada, 'ada')).info.frodadsNumber).toBe(0);
    await expect(people.profileInfo(ada, 'bob')).rejects.toMatchObject({ errorType: 'inactive_user', status: 404 });
    expect([...(await people.activeByIds([ada, bob])).keys()]).toEqual([ada]);
  });
});

describe('people by handle', () => {
  it('finds active people whatever the case of the handle, and refuses unknown, abandoned and renamed-away handles', async () => {
    const store = await project(world);
    const people = new People(store);
    expect((await people.activeByHandle('ADA'))._id).toBe(ada);
    for (const handle of ['nobody', 'eve']) {
      const error = await people.activeByHandle(handle).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ errorType: 'object_not_found', status: 404 });
    }
    await project(history([identity({ type: 'ProfileEdited', data: { userId: cyd, handle: 'Cydney' } })], world), store);
    await expect(people.activeByHandle('cyd')).rejects.toMatchObject({ errorType: 'object_not_found' });
    expect((await people.activeByHandle('cydney')).handle).toBe('Cydney');
  });
});

describe('a copy that lags', () => {
  it('catches up before it calls a handle unknown, and only then', async () => {
    const store = await project(world);
    const late = history([...signUp(id('9'), 'newcomer', 'New', 'Comer')], world);
    let calls = 0;
    const people = new People(store, 'UTC', { catchUp: async () => (calls++, await project(late, store), true) });
    expect((await people.activeByHandle('ada'))._id).toBe(ada);
    expect(calls).toBe(0);
    expect((await people.activeByHandle('newcomer'))._id).toBe(id('9'));
    expect(calls).toBe(1);
    await expect(people.activeByHandle('stillnobody')).rejects.toMatchObject({ errorType: 'object_not_found' });
    expect(calls).toBe(2);
  });
});

describe('relations', () => {
  it('says how each person relates to the requester, from both sides', async () => {
    const people = new People(await project(world));
    expect(await people.relation(ada, ada)).toBe('self');
    expect(await people.relation(ada, bob)).toBe('friend');
    expect(await people.relation(bob, ada)).toBe('friend');
    expect(await people.relation(ada, cyd)).toBe('pending');
    expect(await people.relation(cyd, ada)).toBe('respond');
    expect(await people.relation(dan, ada)).toBe('pending');
    expect(await people.relation(ada, dan)).toBe('respond');
    expect(await people.relation(bob, cyd)).toBe('not-friends');
    expect(await people.relation(cyd, dan)).toBe('not-friends');
  });

  it('answers many relations in one call, the same as one by one', async () => {
    const people = new People(await project(world));
    for (const requester of [ada, bob, cyd, dan]) {
      const many = await people.relations(requester, [ada, bob, cyd, dan]);
      for (const other of [ada, bob, cyd, dan]) expect(many.get(other), `${requester} -> ${other}`).toBe(await people.relation(requester, other));
    }
  });

  it('lists frodads and pending requests, newest request first', async () => {
    const store = await project(world);
    const people = new People(store);
    expect(await people.friendIds(ada)).toEqual([bob]);
    expect(await people.friendIds(cyd)).toEqual([]);
    expect(await people.requests(ada)).toEqual({ received: [dan], sent: [cyd] });
    expect(await people.requests(cyd)).toEqual({ received: [ada], sent: [] });
    await project(history([social(cyd, dan, { type: 'FrodadRequested', data: { fromId: dan, toId: cyd } })], world), store);
    expect((await people.requests(cyd)).received).toEqual([dan, ada]);
  });

  it('shows a Frodad object the way listings spell it', async () => {
    const people = new People(await project(world));
    const person = (await people.byId(ada))!;
    expect(people.frodad(person, 'friend')).toEqual({ handle: 'Ada', lastName: 'King', firstName: 'Ada', profPic: '/media/uploads/ada.png', friend_status: 'friends', level: 2 });
    expect(people.frodad(person, 'respond', { withLevel: false })).toEqual({ handle: 'Ada', lastName: 'King', firstName: 'Ada', profPic: '/media/uploads/ada.png', friend_status: 'respond' });
  });
});
