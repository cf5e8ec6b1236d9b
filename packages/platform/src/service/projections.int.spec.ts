import { defineEventCatalog, type DomainEvent } from '@castie/contracts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFileEventLog, type FileEventLog } from '../embedded/file-event-log.ts';
import { collectionSpec, DeferredUnitsLostError, eachWriteAlone, type Doc, type DocumentStore } from '../ports/document-store.ts';
import type { LogRecord } from '../ports/event-log.ts';
import { SqliteReadModelCopies } from '../sqlite/read-model-copies.ts';
import { openSqliteDocumentStore, type SqliteDocumentStore } from '../sqlite/sqlite-document-store.ts';
import { newId } from './decider.ts';
import { startProjections, type Projection } from './projections.ts';
import { updateOnce } from './update-once.ts';

const catalog = defineEventCatalog('tallies', { Counted: z.object({ n: z.number().int() }) });
const envelope = (data: unknown, type = 'Counted') => JSON.stringify({ id: newId(), type, schemaVersion: 1, streamId: 'tally-1', streamVersion: 1, occurredAt: new Date().toISOString(), actor: 'test', data });

let dir: string;
let log: FileEventLog;
const stores: DocumentStore[] = [];
let files = 0;
/** A read-model store on its own SQLite file (`name` reopens one). */
function openStore(name = `store-${++files}`): SqliteDocumentStore {
  const store = openSqliteDocumentStore({ path: join(dir, `${name}.db`) });
  stores.push(store);
  return store;
}
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'castie-projections-'));
  log = await createFileEventLog({ dir: join(dir, 'log') });
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

interface Sum extends Doc {
  total: number;
  events: number;
}
const SUMS = collectionSpec<Sum>({ name: 'sums' });
const OTHER_SUMS = collectionSpec<Sum>({ name: 'other_sums' });

/**
 * Sums `n` into one document with a plain $inc (not idempotent on purpose: only the runner's
 * checkpoint keeps an event from counting twice); fails on demand for one value.
 */
function tally(options: { failOn?: number; name?: string; version?: number; collection?: typeof SUMS } = {}): Projection {
  return {
    name: options.name ?? 'tally',
    version: options.version ?? 1,
    topics: ['tallies'],
    collections: [options.collection ?? SUMS],
    apply: async (event, _envelope, _record, unit) => {
      const { n } = event.data as { n: number };
      if (n === options.failOn) throw new Error(`cannot count ${n}`);
      await unit.collection(options.collection ?? SUMS).updateOne({ _id: 'sum' }, { $inc: { total: n, events: 1 } }, { upsert: true });
    },
  };
}
/**
 * Counts `n` (as tally does), then, for `failOn`, fails: after its write, and after a find that
 * wrote the unit's documents to the file. Tried again and again, dead-lettered in the end, it must
 * have counted nothing.
 */
function countsThenFails(failOn: number): Projection {
  return {
    ...tally(),
    apply: async (event, _envelope, _record, unit) => {
      const { n } = event.data as { n: number };
      const sums = unit.collection(SUMS);
      await sums.updateOne({ _id: 'sum' }, { $inc: { total: n, events: 1 } }, { upsert: true });
      if (n !== failOn) return;
      await sums.find({ events: { $gt: 0 } });
      throw new Error(`cannot count ${n} after all`);
    },
  };
}
const sumOf = async (store: DocumentStore, spec = SUMS) => (await store.collection(spec).findOne({ _id: 'sum' }))?.total;

async function deadLetters(group: string): Promise<{ reason: string; offset: number }[]> {
  const seen: { reason: string; offset: number }[] = [];
  const sub = await log.subscribe({ group: `${group}-inspector`, topics: [`${group}.dead-letter`], startAt: () => 'earliest', handle: async (rs: LogRecord[]) => void seen.push(...rs.map((r) => JSON.parse(r.value))) });
  const ends = await log.endOffsets(`${group}.dead-letter`);
  const last = (ends.get(0) ?? 0) - 1;
  if (last >= 0) await sub.waitFor([{ topic: `${group}.dead-letter`, partition: 0, offset: last }], 3000);
  await sub.stop();
  return seen;
}

describe('projection runner', () => {
  it('tells `committed` of each batch once it is committed, with the events it applied (not those that broke their contract)', async () => {
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 1 }) }, { key: 'tally-1', value: 'not json' }, { key: 'tally-1', value: envelope({ n: 2 }) }]);
    const store = openStore();
    const told: { ns: number[]; sumThen: number | undefined }[] = [];
    const pending: Promise<void>[] = [];
    const runner = await startProjections({
      group: 'tally-read',
      log,
      store,
      catalogs: [catalog],
      projections: [tally()],
      // What a reader sees at that moment: the batch is in the read model already.
      committed: (events) => void pending.push(sumOf(store).then((sumThen) => void told.push({ ns: events.map((e) => (e.event.data as { n: number }).n), sumThen }))),
    });
    await runner.caughtUp();
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 4 }) }]);
    await runner.waitFor([{ topic: 'tallies', partition: 0, offset: 3 }]);
    await Promise.all(pending);
    expect(told.flatMap((t) => t.ns)).toEqual([1, 2, 4]);
    expect(told.at(-1)!.sumThen).toBe(7);
    await runner.stop();
  });

  it('sends an event that breaks its contract to the dead-letter topic and goes on', async () => {
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 1 }) }, { key: 'tally-1', value: envelope({ n: 'two' }) }, { key: 'tally-1', value: 'not json' }, { key: 'tally-1', value: envelope({ n: 3 }) }]);
    const store = openStore();
    const runner = await startProjections({ group: 'tally-read', log, store, catalogs: [catalog], projections: [tally()] });
    await runner.caughtUp();
    expect(await sumOf(store)).toBe(4);
    const dead = await deadLetters('tally-read');
    expect(dead.map((d) => d.offset)).toEqual([1, 2]);
    expect(dead[0]!.reason).toMatch(/^contract: /);
    await runner.stop();
  });

  it('ends each batch once, after its events and with them in one commit; a failing end dead-letters the batch', async () => {
    await log.append('tallies', [1, 2, 3, 4].map((n) => ({ key: 'tally-1', value: envelope({ n }) })));
    const store = openStore();
    const ends: number[] = [];
    let seen = 0;
    let failEnd = false;
    const batched: Projection = {
      name: 'batched',
      version: 1,
      topics: ['tallies'],
      collections: [SUMS],
      apply: async (event) => {
        seen += (event.data as { n: number }).n;
      },
      endBatch: async (unit) => {
        if (failEnd) throw new Error('cannot end');
        ends.push(seen);
        await unit.collection(SUMS).replaceOne({ _id: 'sum' }, { _id: 'sum', total: seen, events: ends.length }, { upsert: true });
      },
    };
    const runner = await startProjections({ group: 'batched-read', log, store, catalogs: [catalog], projections: [batched] });
    await runner.caughtUp();
    expect(ends).toEqual([10]);
    expect(await sumOf(store)).toBe(10);
    failEnd = true;
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 5 }) }]);
    await runner.catchUp(['tallies']);
    expect((await deadLetters('batched-read')).map((d) => [d.offset, d.reason])).toEqual([[4, 'batched (end of batch): cannot end']]);
    await runner.stop();
  });

  it('tells its observer of each dead letter, per group', async () => {
    await log.append('tallies', [{ key: 'tally-1', value: 'not json' }, { key: 'tally-1', value: envelope({ n: 1 }) }, { key: 'tally-1', value: envelope({ n: 'two' }) }]);
    const store = openStore();
    const dead: string[] = [];
    const runner = await startProjections({ group: 'tally-read', log, store, catalogs: [catalog], projections: [tally()], observer: { deadLettered: (group) => dead.push(group) } });
    await runner.caughtUp();
    expect(dead).toEqual(['tally-read', 'tally-read']);
    await runner.stop();
  });

  it('reports its lag per projection, and while paused keeps it: records appended meanwhile wait until it resumes', async () => {
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 1 }) }]);
    const store = openStore();
    const runner = await startProjections({ group: 'tally-read', log, store, catalogs: [catalog], projections: [tally(), tally({ name: 'other', collection: OTHER_SUMS })] });
    await runner.caughtUp();
    expect(await runner.lag()).toEqual([{ projection: 'tally', lagEvents: 0 }, { projection: 'other', lagEvents: 0 }]);

    await runner.pause();
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 2 }) }, { key: 'tally-1', value: envelope({ n: 3 }) }]);
    expect(await runner.catchUp(['tallies'], 100)).toBe(false);
    expect(await runner.lag()).toEqual([{ projection: 'tally', lagEvents: 2 }, { projection: 'other', lagEvents: 2 }]);
    expect(await sumOf(store)).toBe(1);

    runner.resume();
    expect(await runner.catchUp(['tallies'])).toBe(true);
    expect(await runner.lag()).toEqual([{ projection: 'tally', lagEvents: 0 }, { projection: 'other', lagEvents: 0 }]);
    expect(await sumOf(store)).toBe(6);
    await runner.stop();
  });

  it('stops while paused (stopping lets the held batch go first)', async () => {
    const store = openStore();
    const runner = await startProjections({ group: 'tally-read', log, store, catalogs: [catalog], projections: [tally()] });
    await runner.caughtUp();
    await runner.pause();
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 5 }) }]);
    await runner.stop();
  });

  it('retries a failing event, then dead-letters it and goes on', async () => {
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 1 }) }, { key: 'tally-1', value: envelope({ n: 13 }) }, { key: 'tally-1', value: envelope({ n: 2 }) }]);
    const store = openStore();
    const runner = await startProjections({ group: 'tally-fail', log, store, catalogs: [catalog], projections: [tally({ failOn: 13 })] });
    await runner.caughtUp();
    expect(await sumOf(store)).toBe(3);
    const dead = await deadLetters('tally-fail');
    expect(dead).toHaveLength(1);
    expect(dead[0]!.reason).toBe('tally: cannot count 13');
    await runner.stop();
  });

  it('an event its projection failed on after writing leaves none of those writes, however often it was tried (SQLite)', async () => {
    await log.append('tallies', [1, 13, 2].map((n) => ({ key: 'tally-1', value: envelope({ n }) })));
    const store = openStore();
    const runner = await startProjections({ group: 'tally-partway', log, store, catalogs: [catalog], projections: [countsThenFails(13)] });
    await runner.caughtUp();
    expect(await store.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject({ total: 3, events: 2 });
    expect((await deadLetters('tally-partway')).map((d) => d.reason)).toEqual(['tally: cannot count 13 after all']);
    await runner.stop();
  });

  it('replays a dead letter with no batch in flight and one replay at a time, where units do not exclude each other (MongoDB)', async () => {
    const sqlite = openStore();
    // As MongoDB's store: each write stands alone, and units run side by side.
    const store: DocumentStore = { ...sqlite, transaction: (fn) => fn(eachWriteAlone(sqlite)) };
    let failing = true;
    const seen: string[] = [];
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const projection: Projection = {
      ...tally(),
      apply: async (event, envelope, record, unit) => {
        const { n } = event.data as { n: number };
        if (n === 13 && failing) throw new Error('cannot count 13');
        seen.push(`start ${n}`);
        if (n === 7) await released;
        await tally().apply(event, envelope, record, unit);
        seen.push(`end ${n}`);
      },
    };
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 13 }) }, { key: 'tally-1', value: envelope({ n: 14 }) }]);
    const runner = await startProjections({ group: 'tally-replay', log, store, catalogs: [catalog], projections: [projection] });
    await runner.caughtUp();
    const letters = await runner.deadLetters();
    expect(letters.map((l) => l.offset)).toEqual([0]);
    failing = false;
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 7 }) }]);
    while (!seen.includes('start 7')) await new Promise((resolve) => setTimeout(resolve, 5));
    // The batch of 7 is in flight: both replays wait for it, and the second for the first.
    const replays = [runner.replay(letters[0]!.id), runner.replay(letters[0]!.id)];
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual(['start 14', 'end 14', 'start 7']);
    release();
    const [first, second] = await Promise.allSettled(replays);
    expect(first?.status).toBe('fulfilled');
    expect(second?.status === 'rejected' ? String(second.reason) : 'replayed twice').toMatch(/no longer pending|already replayed/);
    expect(seen).toEqual(['start 14', 'end 14', 'start 7', 'end 7', 'start 13', 'end 13']);
    expect(await sumOf(sqlite)).toBe(34);
    await runner.stop();
  });

  it('applies a replayed dead letter once to documents later records changed, where each write stands alone (MongoDB)', async () => {
    const sqlite = openStore();
    const store: DocumentStore = { ...sqlite, transaction: (fn) => fn(eachWriteAlone(sqlite)) };
    let failing = true;
    let breakAfterWrite = false;
    // Counts with updateOnce, as the read models' counters do: redelivery must not count twice.
    const counted: Projection = {
      ...tally(),
      apply: async (event, _envelope, record, unit) => {
        const { n } = event.data as { n: number };
        if (n === 13 && failing) throw new Error('cannot count 13');
        await updateOnce(unit.collection(SUMS), 'sum', record, { $inc: { total: n, events: 1 } });
        if (breakAfterWrite) throw new Error('the store went away after the first write');
      },
    };
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 13 }) }, { key: 'tally-1', value: envelope({ n: 14 }) }, { key: 'tally-1', value: envelope({ n: 7 }) }]);
    const runner = await startProjections({ group: 'tally-replay-once', log, store, catalogs: [catalog], projections: [counted] });
    await runner.caughtUp();
    const [letter] = await runner.deadLetters();
    expect(await sumOf(sqlite)).toBe(21);

    // The first replay writes, then fails: the letter stays pending, and its write stays (each stands alone).
    failing = false;
    breakAfterWrite = true;
    await expect(runner.replay(letter!.id)).rejects.toThrow(/stays pending/);
    expect(await sumOf(sqlite)).toBe(34);
    // The second replay does not count it again, and marks it replayed.
    breakAfterWrite = false;
    expect((await runner.replay(letter!.id)).status).toBe('replayed');
    expect(await sumOf(sqlite)).toBe(34);
    await runner.stop();

    // The records after the letter, delivered again (a restart before their checkpoint), still count once.
    const unit = eachWriteAlone(sqlite);
    const [fourteen, seven] = await log.read('tallies', 1, 2);
    for (const record of [fourteen!, seven!]) await counted.apply({ type: 'Counted', data: { n: Number(JSON.parse(record.value).data.n) } }, JSON.parse(record.value), record, unit);
    expect(await sumOf(sqlite)).toBe(34);
  });

  it('settles a dead letter whose record a batch delivered again applied, so a replay cannot count it twice (MongoDB)', async () => {
    const sqlite = openStore();
    // As MongoDB's store, where the first checkpoint write of the batch is lost (the process stopped there).
    let loseCheckpoint = true;
    const writes = eachWriteAlone(sqlite);
    const store: DocumentStore = {
      ...sqlite,
      transaction: (fn) =>
        fn({
          ...writes,
          collection: (spec) => {
            const collection = writes.collection(spec);
            if (spec.name !== 'projection_checkpoints') return collection;
            return Object.assign(Object.create(collection) as typeof collection, {
              replaceOne: (...args: Parameters<typeof collection.replaceOne>) => {
                if (!loseCheckpoint) return collection.replaceOne(...args);
                loseCheckpoint = false;
                return Promise.reject(new Error('the store went away'));
              },
            });
          },
        }),
    };
    // 13 fails three times (a passing failure), then counts.
    let failures = 3;
    const counted: Projection = {
      ...tally(),
      apply: async (event, _envelope, record, unit) => {
        const { n } = event.data as { n: number };
        if (n === 13 && failures-- > 0) throw new Error('cannot count 13 yet');
        await updateOnce(unit.collection(SUMS), n === 13 ? 'thirteen' : 'sum', record, { $inc: { total: n, events: 1 } });
      },
    };
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 13 }) }, { key: 'tally-1', value: envelope({ n: 14 }) }]);
    const runner = await startProjections({ group: 'tally-settled', log, store, catalogs: [catalog], projections: [counted] });
    await runner.caughtUp();
    const total = async () => ((await sqlite.collection(SUMS).findOne({ _id: 'thirteen' }))?.total ?? 0) + ((await sqlite.collection(SUMS).findOne({ _id: 'sum' }))?.total ?? 0);
    // The batch came again after its lost checkpoint: 13 counted then, once.
    expect(await total()).toBe(27);
    const letters = await runner.deadLetters({ all: true });
    expect(letters.map((l) => [l.offset, l.status])).toEqual([[0, 'replayed']]);
    await expect(runner.replay(letters[0]!.id)).rejects.toThrow(/already replayed/);
    expect(await total()).toBe(27);
    await runner.stop();
  });

  it("decodes a record once for the runners of a process, and no projection can change another runner's event", async () => {
    const seen: DomainEvent[] = [];
    // A projection that changes the event it was given, before counting it.
    const meddler: Projection = {
      ...tally(),
      apply: async (event, envelope, record, unit) => {
        seen.push(event);
        (event.data as { n: number }).n = 99;
        await tally().apply(event, envelope, record, unit);
      },
    };
    const counter: Projection = { ...tally(), apply: async (event, envelope, record, unit) => void (seen.push(event), await tally().apply(event, envelope, record, unit)) };
    const first = await startProjections({ group: 'tally-meddler', log, store: openStore(), catalogs: [catalog], projections: [meddler] });
    const store = openStore();
    const second = await startProjections({ group: 'tally-after', log, store, catalogs: [catalog], projections: [counter] });
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 5 }) }]);
    expect(await first.catchUp(['tallies'])).toBe(true);
    expect(await second.catchUp(['tallies'])).toBe(true);
    const [refused] = await first.deadLetters();
    expect(refused?.reason).toMatch(/read.only/);
    expect(await sumOf(store)).toBe(5);
    // Both runners were handed the one event decoded (three attempts of the first, one of the second).
    expect(seen).toHaveLength(4);
    expect(new Set(seen).size).toBe(1);
    await first.stop();
    await second.stop();
  });

  it('rebuilds a lost store from the start, and resumes a kept one from its checkpoint', async () => {
    await log.append('tallies', [1, 2, 3].map((n) => ({ key: 'tally-1', value: envelope({ n }) })));
    const kept = openStore('kept');
    const first = await startProjections({ group: 'tally-rebuild', log, store: kept, catalogs: [catalog], projections: [tally()] });
    await first.caughtUp();
    await first.stop();
    await kept.close();
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 10 }) }]);

    // The same file: only the new event is applied (no double counting).
    const reopened = openStore('kept');
    const resumed = await startProjections({ group: 'tally-rebuild', log, store: reopened, catalogs: [catalog], projections: [tally()] });
    await resumed.caughtUp();
    expect(await reopened.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject({ total: 16, events: 4 });
    await resumed.stop();

    // A new, empty store: everything is replayed.
    const fresh = openStore();
    const rebuilt = await startProjections({ group: 'tally-rebuild', log, store: fresh, catalogs: [catalog], projections: [tally()] });
    await rebuilt.caughtUp();
    expect(await fresh.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject({ total: 16, events: 4 });
    await rebuilt.stop();
  });

  it('skips a copy of an event a relay published again: live, after a restart, and in a rebuild', async () => {
    // The log as the cluster's is: fed by a relay that may publish a record again (log.republishedWithin).
    const relayed = Object.assign(log, { republishedWithin: 2000 });
    const values = [1, 2, 3].map((n) => envelope({ n }));
    await log.append('tallies', values.map((value) => ({ key: 'tally-1', value })));
    const kept = openStore('copies');
    const live = await startProjections({ group: 'tally-copies', log: relayed, store: kept, catalogs: [catalog], projections: [tally()] });
    await live.caughtUp();
    // The relay publishes the last two again (it died before it marked them published), and goes on.
    expect(await live.waitFor(await log.append('tallies', [values[1]!, values[2]!, envelope({ n: 10 })].map((value) => ({ key: 'tally-1', value }))), 5000)).toBe(true);
    expect(await kept.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject({ total: 16, events: 4 });
    await live.stop();
    await kept.close();

    // Published again while the runner was stopped: known from the records before where it resumes.
    await log.append('tallies', [{ key: 'tally-1', value: values[0]! }, { key: 'tally-1', value: envelope({ n: 100 }) }]);
    const reopened = openStore('copies');
    const resumed = await startProjections({ group: 'tally-copies', log: relayed, store: reopened, catalogs: [catalog], projections: [tally()] });
    await resumed.caughtUp();
    expect(await reopened.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject({ total: 116, events: 5 });

    // An event this runner cannot read (a newer type): one dead letter, however many copies.
    const unknown = envelope({ n: 7 }, 'Recounted');
    expect(await resumed.waitFor(await log.append('tallies', [unknown, unknown].map((value) => ({ key: 'tally-1', value }))), 5000)).toBe(true);
    expect((await deadLetters('tally-copies')).map((d) => d.offset)).toHaveLength(1);
    await resumed.stop();

    // A rebuild of the same log counts each event once too.
    const fresh = openStore();
    const rebuilt = await startProjections({ group: 'tally-copies', log: relayed, store: fresh, catalogs: [catalog], projections: [tally()] });
    await rebuilt.caughtUp();
    expect(await fresh.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject({ total: 116, events: 5 });
    await rebuilt.stop();
  });

  it('rebuilds only the projection whose version changed; the others resume', async () => {
    const OTHER = collectionSpec<Sum>({ name: 'other_sums' });
    await log.append('tallies', [1, 2, 3].map((n) => ({ key: 'tally-1', value: envelope({ n }) })));
    const store = openStore('versions');
    const both = (version: number) => [tally({ name: 'tally', version }), tally({ name: 'other', collection: OTHER })];
    const first = await startProjections({ group: 'tally-versions', log, store, catalogs: [catalog], projections: both(1) });
    await first.caughtUp();
    await first.stop();
    // Damage both read models: only a rebuild can repair one.
    await store.collection(SUMS).updateOne({ _id: 'sum' }, { $inc: { total: 1000 } });
    await store.collection(OTHER).updateOne({ _id: 'sum' }, { $inc: { total: 1000 } });
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 10 }) }]);

    const second = await startProjections({ group: 'tally-versions', log, store, catalogs: [catalog], projections: both(2) });
    await second.caughtUp();
    expect(await store.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject({ total: 16, events: 4 });
    expect(await store.collection(OTHER).findOne({ _id: 'sum' })).toMatchObject({ total: 1016, events: 4 });
    await second.stop();
  });

  it('builds a projection derived from the other read models in one pass once caught up (fed no event before), and again at the next start if the pass failed', async () => {
    const DOUBLES = collectionSpec<Sum>({ name: 'doubles' });
    await log.append('tallies', [1, 2, 3].map((n) => ({ key: 'tally-1', value: envelope({ n }) })));
    /** Twice the tally: from each event once built, from the tally's read model when rebuilt. */
    const doubled = (store: DocumentStore, options: { failingPass?: boolean } = {}) => {
      const fed: number[] = [];
      const passes: number[] = [];
      const projection: Projection = {
        name: 'doubled',
        version: 1,
        topics: ['tallies'],
        collections: [DOUBLES],
        apply: async (event, _envelope, _record, unit) => {
          fed.push((event.data as { n: number }).n);
          await unit.collection(DOUBLES).updateOne({ _id: 'sum' }, { $inc: { total: 2 * (event.data as { n: number }).n, events: 1 } }, { upsert: true });
        },
        buildFromReadModels: async (unit) => {
          passes.push(passes.length + 1);
          const sum = await unit.collection(SUMS).findOne({ _id: 'sum' });
          await unit.collection(DOUBLES).replaceOne({ _id: 'sum' }, { _id: 'sum', total: 2 * (sum?.total ?? 0), events: sum?.events ?? 0 }, { upsert: true });
          if (options.failingPass) throw new Error('the pass failed');
        },
      };
      return { projection, fed, passes };
    };
    /** What the runner tells operators, line by line. */
    const told = () => {
      const lines: string[] = [];
      const logger = pino({}, { write: (line: string) => void lines.push((JSON.parse(line) as { msg: string }).msg) }) as unknown as FastifyBaseLogger;
      return { logger, lines };
    };
    const store = openStore('derived');
    const failing = doubled(store, { failingPass: true });
    const firstLog = told();
    const first = await startProjections({ group: 'tally-derived', log, store, catalogs: [catalog], projections: [tally(), failing.projection], logger: firstLog.logger });
    await expect(first.caughtUp()).rejects.toThrow('the pass failed');
    await first.stop();
    // The tally is built and resumes; the failed pass left nothing, and no event fed it.
    expect(await sumOf(store)).toBe(6);
    expect(await sumOf(store, DOUBLES)).toBeUndefined();
    expect(failing.fed).toEqual([]);
    // Operators read that the log rebuilt the tally only: the derived one is built by its pass.
    expect(firstLog.lines.filter((l) => l.includes(' rebuilt '))).toEqual([expect.stringMatching(/^tally-derived: rebuilt tally v1 from 3 events /)]);

    // What a failed pass may leave where units of work are not atomic (MongoDB, Redis) goes too.
    await store.collection(DOUBLES).insertOne({ _id: 'left-by-the-failed-pass', total: 1, events: 1 });
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 10 }) }]);
    const working = doubled(store);
    const second = await startProjections({ group: 'tally-derived', log, store, catalogs: [catalog], projections: [tally(), working.projection] });
    // However many wait for it (requests, readiness), the pass runs once.
    await Promise.all([second.caughtUp(), second.caughtUp()]);
    expect(working.passes).toEqual([1]);
    expect(await sumOf(store, DOUBLES)).toBe(32);
    expect(await store.collection(DOUBLES).findOne({ _id: 'left-by-the-failed-pass' })).toBeNull();
    expect(working.fed).toEqual([]);
    // Built: later events feed it one by one.
    const [end] = await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 100 }) }]);
    expect(await second.waitFor([end!])).toBe(true);
    expect(working.fed).toEqual([100]);
    expect(await store.collection(DOUBLES).findOne({ _id: 'sum' })).toMatchObject({ total: 232, events: 5 });
    expect(await second.lag()).toEqual([
      { projection: 'tally', lagEvents: 0 },
      { projection: 'doubled', lagEvents: 0 },
    ]);
    await second.stop();

    // Its version bumped, it alone is rebuilt: by a pass, without reading the log again.
    await store.collection(DOUBLES).updateOne({ _id: 'sum' }, { $inc: { total: 1000 } });
    const bumped = doubled(store);
    const thirdLog = told();
    const third = await startProjections({ group: 'tally-derived', log, store, catalogs: [catalog], projections: [tally(), { ...bumped.projection, version: 2 }], logger: thirdLog.logger });
    await third.caughtUp();
    expect(third.applied()).toBe(0);
    expect(thirdLog.lines.filter((l) => / rebuil(t|ding) /.test(l))).toEqual([]);
    expect(thirdLog.lines).toContainEqual(expect.stringMatching(/^tally-derived: built doubled v2 from the other read models in /));
    expect(await sumOf(store, DOUBLES)).toBe(232);
    expect((await third.lag()).map((l) => l.lagEvents)).toEqual([0, 0]);
    await third.stop();
    // The pass committed its checkpoints: the next start applies nothing again.
    const fourth = await startProjections({ group: 'tally-derived', log, store, catalogs: [catalog], projections: [tally(), { ...doubled(store).projection, version: 2 }] });
    await fourth.caughtUp();
    expect(fourth.applied()).toBe(0);
    expect(await sumOf(store, DOUBLES)).toBe(232);
    await fourth.stop();
  });

  it('copies a projection another store of the process finished instead of rebuilding it, and goes on from where the copy was', async () => {
    await log.append('tallies', [1, 2, 3].map((n) => ({ key: 'tally-1', value: envelope({ n }) })));
    const copies = new SqliteReadModelCopies();
    const first = openStore();
    const built = await startProjections({ group: 'tally-first', log, store: first, catalogs: [catalog], projections: [tally()], copies: copies.for(first) });
    await built.caughtUp();
    expect(built.applied()).toBe(3);

    // A second store with the same projection and one of its own: the tally is copied (nothing of
    // its topic applied for it), the other is built from the log; later events reach both once.
    const second = openStore();
    const lines: string[] = [];
    const logger = { info: (_obj: unknown, msg: string) => lines.push(msg), warn: () => {}, error: () => {}, child: () => logger } as unknown as Parameters<typeof startProjections>[0]['logger'];
    const copied = await startProjections({ group: 'tally-second', log, store: second, catalogs: [catalog], projections: [tally(), tally({ name: 'other', collection: OTHER_SUMS })], copies: copies.for(second), ...(logger ? { logger } : {}) });
    await copied.caughtUp();
    expect(lines.some((l) => /^tally-second: copied tally v1 from tally-first in [\d.]+ s \(no rebuild\)$/.test(l))).toBe(true);
    expect(await sumOf(second)).toBe(6);
    expect(await sumOf(second, OTHER_SUMS)).toBe(6);
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 10 }) }]);
    await copied.catchUp(['tallies']);
    await built.catchUp(['tallies']);
    expect(await second.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject({ total: 16, events: 4 });
    expect(await sumOf(second, OTHER_SUMS)).toBe(16);
    expect(await sumOf(first)).toBe(16);

    // Another version of the code is not copied: it is rebuilt.
    await copied.stop();
    const third = openStore();
    const rebuilt = await startProjections({ group: 'tally-third', log, store: third, catalogs: [catalog], projections: [tally({ version: 2 })], copies: copies.for(third) });
    await rebuilt.caughtUp();
    expect(rebuilt.applied()).toBe(4);
    expect(await sumOf(third)).toBe(16);
    await rebuilt.stop();
    await built.stop();
  });

  it.each([
    ['', false],
    [' (a log that may publish a record again: the events of a batch not committed are not taken for copies)', true],
  ])('applies a batch and its checkpoint together: a batch whose commit failed is applied again, once%s', async (_, relayed) => {
    const store = openStore();
    let failNextCommit = true;
    // The unit of work runs (every write made), then its commit fails: as if the process died there.
    const flaky: DocumentStore = {
      ...store,
      collection: (spec) => store.collection(spec),
      transaction: (fn) =>
        store.transaction(async (unit) => {
          const result = await fn(unit);
          if (failNextCommit) {
            failNextCommit = false;
            throw new Error('the commit did not happen');
          }
          return result;
        }),
    };
    await log.append('tallies', [1, 2, 3].map((n) => ({ key: 'tally-1', value: envelope({ n }) })));
    const runner = await startProjections({ group: 'tally-atomic', log: relayed ? Object.assign(log, { republishedWithin: 2000 }) : log, store: flaky, catalogs: [catalog], projections: [tally()] });
    await runner.caughtUp();
    expect(await store.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject({ total: 6, events: 3 });
    expect(failNextCommit).toBe(false);
    await runner.stop();
  });

  describe('a rebuild of more than one batch (the log delivers 10,000 records at most)', () => {
    const EVENTS = 25_001;
    const appendMany = () => log.append('tallies', Array.from({ length: EVENTS }, (_, n) => ({ key: 'tally-1', value: envelope({ n }) })));
    const expected = { total: ((EVENTS - 1) * EVENTS) / 2, events: EVENTS };
    /** The store, telling which units of work asked to defer; `failDeferred` fails that deferred unit (1-based) after its writes. */
    const recording = (store: DocumentStore, failDeferred = 0) => {
      const defers: boolean[] = [];
      const wrapped: DocumentStore = {
        ...store,
        collection: (spec) => store.collection(spec),
        transaction: (fn, options) => {
          defers.push(options?.defer ?? false);
          const failing = options?.defer && defers.filter(Boolean).length === failDeferred;
          return store.transaction(async (unit) => {
            const result = await fn(unit);
            if (failing) throw new Error('the disk is full');
            return result;
          }, options);
        },
      };
      return { store: wrapped, defers };
    };

    it('defers the batches of the log as it was at start, but the last, which commits them; serving, each batch commits on its own', async () => {
      await appendMany();
      const { store, defers } = recording(openStore());
      const runner = await startProjections({ group: 'tally-deferred', log, store, catalogs: [catalog], projections: [tally()] });
      await runner.caughtUp();
      expect(defers).toEqual([true, true, false]);
      expect(await store.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject(expected);
      await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 1 }) }]);
      expect(await runner.waitFor([{ topic: 'tallies', partition: 0, offset: EVENTS }])).toBe(true);
      expect(defers).toEqual([true, true, false, false]);
      expect(await sumOf(store)).toBe(expected.total + 1);
      await runner.stop();
    });

    it('an event its projection failed on partway, in a deferred batch, leaves none of its writes among the others held', async () => {
      await appendMany();
      const { store, defers } = recording(openStore());
      const runner = await startProjections({ group: 'tally-partway-deferred', log, store, catalogs: [catalog], projections: [countsThenFails(12_345)] });
      await runner.caughtUp();
      expect(defers).toEqual([true, true, false]);
      expect(await store.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject({ total: expected.total - 12_345, events: EVENTS - 1 });
      expect((await deadLetters('tally-partway-deferred')).map((d) => d.offset)).toEqual([12_345]);
      await runner.stop();
    });

    it('stopped in the middle of a rebuild, commits what it deferred: the next runner on the store applies each event once', async () => {
      await appendMany();
      const real = openStore();
      let holding!: () => void;
      const held = new Promise<void>((resolve) => (holding = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // The first deferred batch waits, applied, until the runner is being stopped.
      let deferred = 0;
      const store: DocumentStore = {
        ...real,
        collection: (spec) => real.collection(spec),
        transaction: (fn, options) =>
          real.transaction(async (unit) => {
            const result = await fn(unit);
            if (options?.defer && ++deferred === 1) {
              holding();
              await released;
            }
            return result;
          }, options),
      };
      const runner = await startProjections({ group: 'tally-stopped', log, store, catalogs: [catalog], projections: [tally()] });
      await held;
      const stopping = runner.stop();
      release();
      await stopping;
      expect(await real.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject({ total: ((10_000 - 1) * 10_000) / 2, events: 10_000 });
      const again = await startProjections({ group: 'tally-stopped', log, store: real, catalogs: [catalog], projections: [tally()] });
      await again.caughtUp();
      expect(await real.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject(expected);
      await again.stop();
    });

    it('resumed (nothing to rebuild), defers nothing', async () => {
      await appendMany();
      const first = openStore('kept');
      const runner = await startProjections({ group: 'tally-deferred', log, store: first, catalogs: [catalog], projections: [tally()] });
      await runner.caughtUp();
      await runner.stop();
      await log.append('tallies', Array.from({ length: EVENTS }, (_, n) => ({ key: 'tally-1', value: envelope({ n }) })));
      const { store, defers } = recording(first);
      const again = await startProjections({ group: 'tally-deferred', log, store, catalogs: [catalog], projections: [tally()] });
      await again.caughtUp();
      expect(defers).toEqual([false, false, false]);
      expect(await sumOf(store)).toBe(expected.total * 2);
      await again.stop();
    });

    for (const { held, deferredDocuments } of [
      { held: 'both deferred batches', deferredDocuments: undefined },
      { held: 'the failed batch only (the first was committed: its unit held more documents than allowed)', deferredDocuments: 1 },
    ]) {
      it(`stops when deferred batches are rolled back (${held}): catching up fails, and the next start goes on from the last commit, each event applied once`, async () => {
        await appendMany();
        const real = openSqliteDocumentStore({ path: join(dir, 'lost.db'), ...(deferredDocuments ? { deferredDocuments } : {}) });
        stores.push(real);
        const { store } = recording(real, 2);
        const runner = await startProjections({ group: 'tally-lost', log, store, catalogs: [catalog], projections: [tally()] });
        await expect(runner.caughtUp()).rejects.toBeInstanceOf(DeferredUnitsLostError);
        await runner.stop();
        expect(await sumOf(real)).toBe(deferredDocuments ? ((10_000 - 1) * 10_000) / 2 : undefined);
        // The store takes no more writes until it is opened again (as after a crash).
        await expect(real.transaction(async () => undefined)).rejects.toBeInstanceOf(DeferredUnitsLostError);
        await real.close();
        const reopened = openSqliteDocumentStore({ path: join(dir, 'lost.db') });
        stores.push(reopened);
        const again = await startProjections({ group: 'tally-lost', log, store: reopened, catalogs: [catalog], projections: [tally()] });
        await again.caughtUp();
        expect(await reopened.collection(SUMS).findOne({ _id: 'sum' })).toMatchObject(expected);
        await again.stop();
      });
    }
  });

  it('reports a rebuild for people: events, percent and events per second', async () => {
    await log.append('tallies', Array.from({ length: 50 }, (_, i) => ({ key: 'tally-1', value: envelope({ n: i }) })));
    const store = openStore();
    const lines: string[] = [];
    const logger = { info: (_obj: unknown, msg: string) => lines.push(msg), warn: () => {}, error: () => {}, child: () => logger } as unknown as Parameters<typeof startProjections>[0]['logger'];
    const runner = await startProjections({ group: 'tally-progress', log, store, catalogs: [catalog], projections: [tally()], logger, progressEveryMs: 0 });
    await runner.caughtUp();
    await runner.stop();
    expect(lines[0]).toBe('tally-progress: rebuilding tally v1 from 50 events in the log');
    expect(lines.some((l) => /^tally-progress: 50 of 50 events \(100%\), [\d,]+ events\/s$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^tally-progress: rebuilt tally v1 from 50 events in [\d.]+ s \([\d,]+ events\/s\)$/);
  });
});
