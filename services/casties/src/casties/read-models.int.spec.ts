import type { CastieEvent, EventEnvelope } from '@castie/contracts';
import { eachWriteAlone, type CollectionSpec, type Doc, type DocumentStore, type LogRecord, type Projection, type UnitOfWork } from '@castie/platform';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import { describe, expect, it } from 'vitest';
import { COMMENT_COUNTS, COMMENTS, commentsProjection } from '../comments/read-model.ts';
import { CASTIE_SEARCH, searchIndexProjection } from '../feeds/read-model.ts';
import { FORECASTERS, FORECASTS, forecastDocId, forecastsOfCastie, forecastsProjection, ROSTERS, type ForecastDoc } from '../forecasting/read-model.ts';
import { CASTIE_VIEWS, castieViewsProjection } from './read-model.ts';

// Events of one Castie live in several streams (castie-, forecast-, comment-), which Kafka may
// put in different partitions: the read model must not depend on the order they arrive in.
const hex = (c: string) => c.repeat(32);
const castieId = hex('a');
const [ann, bob, cyd] = [hex('1'), hex('2'), hex('3')];
const commentId = hex('c');
const at = (m: number) => new Date(Date.UTC(2026, 2, 1, 12, m)).toISOString();

const events: { streamId: string; event: CastieEvent }[] = [
  {
    streamId: `castie-${castieId}`,
    event: {
      type: 'CastieCreated',
      data: { castieId, groupSlug: 'g', creatorId: ann, question: 'Rain?', showUsername: true, allowWriteIn: false, options: [{ answerId: 1, text: 'Yes' }, { answerId: 2, text: 'No' }], endsAt: at(60), endDate: '2026-03-01', endTime: '13:00', createdAt: at(0) },
    },
  },
  { streamId: `forecast-${castieId}-${bob}`, event: { type: 'ForecastPlaced', data: { castieId, groupSlug: 'g', userId: bob, forecastId: 11, answerId: 1, text: 'Yes', placedAt: at(1) } } },
  { streamId: `forecast-${castieId}-${cyd}`, event: { type: 'ForecastPlaced', data: { castieId, groupSlug: 'g', userId: cyd, forecastId: 12, answerId: 2, text: 'No', placedAt: at(2) } } },
  { streamId: `comment-${commentId}`, event: { type: 'CommentPosted', data: { commentId, castieId, userId: bob, text: 'cloudy', postedAt: at(3) } } },
  { streamId: `castie-${castieId}`, event: { type: 'CastieReported', data: { castieId, reporterId: cyd } } },
  {
    streamId: `castie-${castieId}`,
    event: { type: 'CastieAnswered', data: { castieId, groupSlug: 'g', correctAnswerId: 1, correctText: 'Yes', answeredAt: at(70), scores: [{ userId: bob, forecastId: 11, correct: true, points: 55 }, { userId: cyd, forecastId: 12, correct: false, points: 0 }] } },
  },
];

/** Applies events in the given order; each stream has its own partition with its own offsets. */
async function build(order: number[]): Promise<DocumentStore> {
  const store = openSqliteDocumentStore({ path: ':memory:' });
  const projections = [castieViewsProjection(), forecastsProjection(), commentsProjection(), searchIndexProjection()];
  const partitions = new Map<string, number>();
  const offsets = new Map<number, number>();
  for (const i of order) {
    const { streamId, event } = events[i]!;
    const partition = partitions.get(streamId) ?? partitions.set(streamId, partitions.size).get(streamId)!;
    const offset = (offsets.get(partition) ?? -1) + 1;
    offsets.set(partition, offset);
    const envelope: EventEnvelope = { id: `e${i}`, type: event.type, schemaVersion: 1, streamId, streamVersion: 1, occurredAt: at(i), actor: ann, data: event.data };
    const record: LogRecord = { topic: 'casties', partition, offset, key: streamId, value: JSON.stringify(envelope), timestamp: 0 };
    for (const projection of projections) await projection.apply(event, envelope, record, eachWriteAlone(store));
  }
  return store;
}

/** A collection's documents without delivery bookkeeping (`_applied` depends on the order). */
async function all<T extends Doc>(store: DocumentStore, spec: CollectionSpec<T>) {
  return (await store.collection(spec).find({})).map(({ _applied: _ignored, ...rest }) => rest).sort((a, b) => (a._id < b._id ? -1 : 1));
}

/** Who is on each Castie's roster (their numbers, and the roster's order, follow the order forecasts arrived in). */
async function rosters(store: DocumentStore) {
  const who = new Map((await store.collection(FORECASTERS).find({})).map((f) => [f.n, f._id]));
  return (await store.collection(ROSTERS).find({})).map((r) => ({ _id: r._id, forecasters: (r.forecasters.match(/.{8}/g) ?? []).map((n) => who.get(parseInt(n, 16))).sort() }));
}

/** Applies `events[i]` with `projection`, as the record at `at$` of the casties topic. */
const deliveries =
  (projection: Projection) =>
  (i: number, at$: { partition: number; offset: number }, unit: UnitOfWork): Promise<void> => {
    const { streamId, event } = events[i]!;
    const envelope: EventEnvelope = { id: `e${i}`, type: event.type, schemaVersion: 1, streamId, streamVersion: 1, occurredAt: at(i), actor: ann, data: event.data };
    const record: LogRecord = { topic: 'casties', ...at$, key: streamId, value: JSON.stringify(envelope), timestamp: 0 };
    return projection.apply(event, envelope, record, unit);
  };

/** Each write alone (as on MongoDB), where the process dies at the first update of `collection`. */
const stopsAt = (store: DocumentStore, collection: string): UnitOfWork => ({
  atomic: false,
  attempt: (fn) => fn(),
  collection: (spec) => {
    const found = store.collection(spec);
    return spec.name === collection ? { ...found, updateOne: () => Promise.reject(new Error('killed')) } : found;
  },
});

async function contents(store: DocumentStore) {
  return { views: await all(store, CASTIE_VIEWS), forecasts: await all(store, FORECASTS), comments: await all(store, COMMENTS), counts: await all(store, COMMENT_COUNTS), search: await all(store, CASTIE_SEARCH), rosters: await rosters(store) };
}

describe('casties read model', () => {
  it('is the same whichever order the streams of one Castie arrive in', async () => {
    const inOrder = await contents(await build([0, 1, 2, 3, 4, 5]));
    expect(inOrder.views[0]).toMatchObject({ forecastsCount: 2, answered: true, reports: 1, activityAt: at(2), createdAt: at(0) });
    expect(inOrder.counts).toEqual([{ _id: castieId, shown: 1 }]);
    expect(inOrder.forecasts.map((f) => [f.userId, f.correct, f.points])).toEqual([[bob, true, 55], [cyd, false, 0]]);
    expect(inOrder.rosters).toEqual([{ _id: castieId, forecasters: [bob, cyd] }]);
    // Comment, forecasts and the answer before the Castie was created; streams keep their own order.
    expect(await contents(await build([3, 1, 2, 0, 4, 5]))).toEqual(inOrder);
    expect(await contents(await build([1, 3, 0, 4, 5, 2]))).toEqual(inOrder);
  });

  it('puts a forecaster on the roster when the delivery that placed the forecast stopped before it (each write alone, as on MongoDB)', async () => {
    const store = openSqliteDocumentStore({ path: ':memory:' });
    const deliver = deliveries(forecastsProjection());
    const bob$ = { partition: 0, offset: 7 };
    // The process dies once the forecast is written, before its forecaster is on the roster.
    await expect(deliver(1, bob$, stopsAt(store, ROSTERS.name))).rejects.toThrow('killed');
    expect(await all(store, FORECASTS)).toHaveLength(1);
    expect(await rosters(store)).toEqual([]);
    // The log delivers the event again (its offset was never committed), and once more.
    for (let i = 0; i < 2; i++) await deliver(1, bob$, eachWriteAlone(store));
    expect(await rosters(store)).toEqual([{ _id: castieId, forecasters: [bob] }]);
    expect((await all(store, FORECASTS)).map((f) => f.userId)).toEqual([bob]);
  });

  // Bob's first forecast is counted, and its delivery stops before it gives him the number (the
  // process dies, or the write fails until the record is dead-lettered). Cyd's first forecast is
  // applied before Bob's comes again: after a restart, from another partition; or later in the
  // same partition, Bob's record replayed from the dead letters. (A replay on MongoDB leaves out
  // every guarded update of a document a later record of its partition changed: there, Bob's
  // roster entry. Only the numbers are checked in that case.)
  for (const [when, cyd$, rosterToo] of [
    ['from another partition, applied first after a restart', { partition: 2, offset: 0 }, true],
    ['later in the same partition, before the record is replayed from the dead letters', { partition: 1, offset: 1 }, false],
  ] as const) {
    it(`gives a forecaster their own number when the delivery that counted it stopped and someone else counted before it came again: ${when} (each write alone, as on MongoDB)`, async () => {
      const store = openSqliteDocumentStore({ path: ':memory:' });
      const deliver = deliveries(forecastsProjection());
      const bob$ = { partition: 1, offset: 0 };
      await expect(deliver(1, bob$, stopsAt(store, FORECASTERS.name))).rejects.toThrow('killed');
      await deliver(2, cyd$, eachWriteAlone(store));
      await deliver(1, bob$, eachWriteAlone(store));
      const numbers = (await store.collection(FORECASTERS).find({})).map((f) => f.n);
      expect(new Set(numbers).size).toBe(2);
      if (rosterToo) expect(await rosters(store)).toEqual([{ _id: castieId, forecasters: [bob, cyd] }]);
    });
  }

  it('gives a forecaster the number counted for them when their delivery stopped before giving it and nobody counted since (each write alone)', async () => {
    const store = openSqliteDocumentStore({ path: ':memory:' });
    const deliver = deliveries(forecastsProjection());
    const bob$ = { partition: 0, offset: 0 };
    await expect(deliver(1, bob$, stopsAt(store, FORECASTERS.name))).rejects.toThrow('killed');
    await deliver(1, bob$, eachWriteAlone(store));
    expect((await store.collection(FORECASTERS).find({})).map((f) => f.n)).toEqual([1]);
  });

  it("finds a Castie's forecasts, and only them, through the _id index", async () => {
    const store = openSqliteDocumentStore({ path: ':memory:' });
    const forecasts = store.collection(FORECASTS);
    // Castie ids that sort right before and after it, and one that extends it.
    const neighbours = [castieId.slice(0, -1) + '9', castieId.slice(0, -1) + 'b', `${castieId}0`];
    const doc = (c: string, userId: string): ForecastDoc => ({ _id: forecastDocId(c, userId), castieId: c, groupSlug: 'g', userId, forecastId: 1, answerId: 1, text: 'Yes', placedAt: at(1), correct: null, points: 0 });
    await store.transaction(async (unit) => {
      for (const c of [castieId, ...neighbours]) for (const userId of [ann, bob, cyd]) await unit.collection(FORECASTS).insertOne(doc(c, userId));
    });
    const found = await forecasts.find(forecastsOfCastie(castieId));
    expect(found.map((f) => [f.castieId, f.userId]).sort()).toEqual([ann, bob, cyd].map((u) => [castieId, u]));
    const plan = store.explain(FORECASTS, forecastsOfCastie(castieId));
    expect(plan.join('\n')).toMatch(/SEARCH .* USING INDEX sqlite_autoindex_castie_forecasts/);
    expect(plan.join('\n')).not.toMatch(/SCAN/);
  });
});
