import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { collectionSpec, DeferredUnitsLostError, type Collection, type CollectionSpec, type Doc, type UnitOfWork } from '../ports/document-store.ts';
import { describeDocumentStore } from '../testing/conformance/document-store.ts';
import { openSqliteDocumentStore, type SqliteDocumentStore } from './sqlite-document-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'castie-sqlite-'));
let n = 0;
const file = () => join(dir, `store-${++n}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeDocumentStore('sqlite in memory', () => openSqliteDocumentStore({ path: ':memory:' }));
describeDocumentStore('sqlite file (a writer and a reader connection)', () => openSqliteDocumentStore({ path: file() }));
describeDocumentStore("sqlite private file (a rebuild thread's: one connection, journal in memory)", () => openSqliteDocumentStore({ path: file(), privateFile: true }));

interface View extends Doc {
  groupSlug: string;
  activityAt: string;
  question: string;
  terms: string[];
  forecasts: number;
}
const views = collectionSpec<View>({
  name: 'views',
  arrays: ['terms'],
  indexes: [{ keys: { groupSlug: 1, activityAt: -1, _id: -1 } }, { keys: { activityAt: -1, _id: -1 } }, { keys: { terms: 1 } }],
});
const view = (i: number): View => ({
  _id: `c${String(i).padStart(5, '0')}`,
  groupSlug: `g${i % 20}`,
  activityAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
  question: `question ${i}`,
  terms: [`w${i % 3}`, 'all'],
  forecasts: 0,
});

describe('sqlite document store', () => {
  const opened: SqliteDocumentStore[] = [];
  const open = (path = file()) => {
    const store = openSqliteDocumentStore({ path });
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it('keeps nothing of a unit of work that fails, and others never see it half done', async () => {
    const store = open();
    const c = store.collection(views);
    await c.insertOne(view(1));
    let release!: () => void;
    const paused = new Promise<void>((resolve) => (release = resolve));
    let midway!: () => void;
    const reachedMidway = new Promise<void>((resolve) => (midway = resolve));
    const unit = store.transaction(async (unit) => {
      const c = unit.collection(views);
      await c.updateOne({ _id: view(1)._id }, { $inc: { forecasts: 5 } });
      await c.insertOne(view(2));
      midway();
      await paused;
      throw new Error('the batch failed');
    });
    await reachedMidway;
    // Another reader while the unit is open: the committed state only.
    expect((await c.findOne({ _id: view(1)._id }))?.forecasts).toBe(0);
    expect(await c.countDocuments()).toBe(1);
    release();
    await expect(unit).rejects.toThrow('the batch failed');
    expect((await c.findOne({ _id: view(1)._id }))?.forecasts).toBe(0);
    expect(await c.findOne({ _id: view(2)._id })).toBeNull();
  });

  describe('an attempt inside a unit (a projection tried on one event)', () => {
    interface Note extends Doc {
      text: string;
    }
    const notes = collectionSpec<Note>({ name: 'attempt_notes' });
    /** The unit's writes before the attempt: one committed document changed, one new, neither written to the file yet. */
    const before = async (c: Collection<View>) => {
      await c.updateOne({ _id: view(1)._id }, { $inc: { forecasts: 1 }, $push: { terms: 'early' } });
      await c.insertOne(view(2));
    };
    /**
     * Every kind of write, in place and whole, then a find that writes the table to the file (a
     * savepoint's work), then a collection set up (its table made inside that savepoint), then a failure.
     */
    const failing = async (c: Collection<View>, other: () => Collection<Note>) => {
      await c.updateOne({ _id: view(1)._id }, { $inc: { forecasts: 10 }, $push: { terms: 'late' }, $set: { question: 'changed' }, $unset: { groupSlug: '' } });
      await c.updateOne({ _id: view(2)._id }, { $set: { activityAt: '2030-01-01T00:00:00.000Z' } });
      await c.replaceOne({ _id: view(3)._id }, { ...view(3), question: 'replaced' });
      await c.deleteOne({ _id: view(4)._id });
      await c.insertOne(view(5));
      expect(await c.countDocuments({ question: { $in: ['changed', 'replaced'] } })).toBe(2);
      await other().insertOne({ _id: 'n1', text: 'a collection first written here' });
      throw new Error('the projection failed after its writes');
    };
    /** The unit's own view right after the failed attempt: as before it. */
    const asBefore = async (c: Collection<View>) => {
      expect(await c.findOne({ _id: view(1)._id })).toMatchObject({ forecasts: 1, groupSlug: view(1).groupSlug, question: view(1).question });
      expect(await c.findOne({ _id: view(2)._id })).toEqual(view(2));
      expect(await c.findOne({ _id: view(3)._id })).toEqual(view(3));
      expect(await c.findOne({ _id: view(4)._id })).toEqual(view(4));
      expect(await c.findOne({ _id: view(5)._id })).toBeNull();
      expect(await c.countDocuments({ question: { $in: ['changed', 'replaced'] } })).toBe(0);
    };
    const expected = async (store: SqliteDocumentStore) => {
      const c = store.collection(views);
      expect(await c.findOne({ _id: view(1)._id })).toEqual({ ...view(1), forecasts: 1, terms: [...view(1).terms, 'early'] });
      expect(await c.findOne({ _id: view(2)._id })).toEqual(view(2));
      expect(await c.findOne({ _id: view(3)._id })).toEqual(view(3));
      expect(await c.findOne({ _id: view(4)._id })).toEqual(view(4));
      expect(await c.findOne({ _id: view(5)._id })).toBeNull();
      expect(await c.countDocuments({ terms: 'late' })).toBe(0);
      expect(await c.countDocuments({ terms: 'early' })).toBe(1);
      expect(await store.collection(notes).countDocuments()).toBe(0);
    };

    it('that fails leaves none of its writes, the unit goes on and commits the rest', async () => {
      const store = open();
      for (const i of [1, 3, 4]) await store.collection(views).insertOne(view(i));
      await store.transaction(async (unit) => {
        const c = unit.collection(views);
        await before(c);
        await expect(unit.attempt(() => failing(c, () => unit.collection(notes)))).rejects.toThrow(/failed after its writes/);
        await asBefore(c);
        // The unit's own writes after it count, to the collection the attempt set up too.
        await unit.collection(notes).insertOne({ _id: 'n2', text: 'written after the attempt' });
      });
      expect(await store.collection(notes).findOne({ _id: 'n2' })).toMatchObject({ text: 'written after the attempt' });
      await store.collection(notes).deleteOne({ _id: 'n2' });
      await expected(store);
      // A later attempt that succeeds keeps its writes.
      await store.transaction(async (unit) => {
        await unit.attempt(async () => void (await unit.collection(views).updateOne({ _id: view(3)._id }, { $set: { question: 'kept' } })));
        await expect(unit.attempt(() => unit.attempt(async () => undefined))).rejects.toThrow(/do not nest/);
      });
      expect(await store.collection(views).findOne({ _id: view(3)._id })).toMatchObject({ question: 'kept' });
    });

    it('not awaited inside its unit (a caller bug), it settles with an error and leaves the units after it alone', async () => {
      const store = open();
      const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      const orphans: Promise<unknown>[] = [];
      const orphan = (unit: UnitOfWork, spec: CollectionSpec<Note>) => {
        const attempt = unit.attempt(async () => {
          // Made before its unit ends (as a write not awaited would be): they stay with it.
          const writes = [unit.collection(spec).insertOne({ _id: `orphan-${orphans.length + 1}`, text: 'x' }), unit.collection(spec).find({})];
          await Promise.all(writes);
          await later(50);
          throw new Error('failed late');
        });
        orphans.push(attempt.catch((error: unknown) => error));
      };
      // Its own unit commits; the next unit, open when the orphan fails, commits what it wrote.
      await store.transaction(async (unit) => orphan(unit, notes));
      await store.transaction(async (unit) => {
        await unit.collection(notes).insertOne({ _id: 'next', text: 'kept' });
        await unit.collection(notes).find({});
        await later(100);
      });
      // A deferred batch's orphan: the next batch of the same held unit makes its own attempts.
      await store.transaction(async (unit) => orphan(unit, notes), { defer: true });
      await store.transaction((unit) => unit.attempt(async () => void (await unit.collection(notes).insertOne({ _id: 'deferred', text: 'kept' }))), { defer: true });
      for (const error of await Promise.all(orphans)) expect(String(error)).toMatch(/settled after its unit of work ended/);
      await store.transaction(async () => undefined);
      expect((await store.collection(notes).find({})).map((n) => n._id).sort()).toEqual(['deferred', 'next', 'orphan-1', 'orphan-2']);
    });

    it('that fails in a deferred unit (a rebuild) leaves none of its writes either', async () => {
      const store = open();
      for (const i of [1, 3, 4]) await store.collection(views).insertOne(view(i));
      await store.beginBulkLoad([views.name]);
      await store.transaction(async (unit) => before(unit.collection(views)), { defer: true });
      await store.transaction(async (unit) => {
        await expect(unit.attempt(() => failing(unit.collection(views), () => unit.collection(notes)))).rejects.toThrow(/failed after its writes/);
        await asBefore(unit.collection(views));
      }, { defer: true });
      await store.endBulkLoad();
      await expected(store);
    });
  });

  it("reads outside a unit see each commit at once, and never an open unit's writes, even flushed to the file", async () => {
    const store = open();
    const c = store.collection(views);
    const inGroup = async (from = c) => (await from.find({ groupSlug: 'g1' }, { sort: { activityAt: -1, _id: -1 } })).map((d) => `${d._id}:${d.forecasts}`);
    await c.insertOne(view(1));
    expect(await inGroup()).toEqual(['c00001:0']);
    let release!: () => void;
    const paused = new Promise<void>((resolve) => (release = resolve));
    let midway!: () => void;
    const reachedMidway = new Promise<void>((resolve) => (midway = resolve));
    let inside: string[] = [];
    const unit = store.transaction(async (unit) => {
      const c = unit.collection(views);
      await c.updateOne({ _id: view(1)._id }, { $inc: { forecasts: 5 } });
      await c.insertOne(view(21));
      // A query inside the unit writes its pending changes to the file (uncommitted).
      inside = await inGroup(c);
      midway();
      await paused;
    });
    await reachedMidway;
    expect(inside).toEqual(['c00021:0', 'c00001:5']);
    expect(await inGroup()).toEqual(['c00001:0']);
    expect(await c.countDocuments({ groupSlug: 'g1' })).toBe(1);
    expect(await c.countBy({}, 'groupSlug')).toEqual(new Map([['g1', 1]]));
    expect(await c.findOne({ _id: view(21)._id })).toBeNull();
    release();
    await unit;
    expect(await inGroup()).toEqual(['c00021:0', 'c00001:5']);
    expect(await c.countDocuments({ groupSlug: 'g1' })).toBe(2);
    expect(await c.countBy({}, 'groupSlug')).toEqual(new Map([['g1', 2]]));
    // Commit after commit, each read sees the last one.
    for (let i = 1; i <= 3; i++) {
      await store.transaction((unit) => unit.collection(views).updateOne({ _id: view(21)._id }, { $inc: { forecasts: 1 } }));
      expect(await inGroup()).toEqual([`c00021:${i}`, 'c00001:5']);
      expect(await c.countDocuments({ forecasts: i })).toBe(1);
    }
  });

  it('readers holding a document get what each commit wrote to it, frozen, and never what a failed unit wrote', async () => {
    const store = open();
    const c = store.collection(views);
    const id = view(1)._id;
    await c.insertOne(view(1));
    const first = (await c.findOne({ _id: id }))!;
    // Batch after batch changes the same document, its indexed field and its array field too.
    for (let i = 1; i <= 3; i++) {
      await store.transaction(async (unit) => {
        const c = unit.collection(views);
        await c.updateOne({ _id: id }, { $inc: { forecasts: 1 }, $set: { activityAt: view(100 + i).activityAt, terms: [`t${i}`] } });
        await c.updateOne({ _id: id }, { $inc: { forecasts: 10 } });
      });
      const now = (await c.findOne({ _id: id }))!;
      expect(now.forecasts).toBe(11 * i);
      expect(Object.isFrozen(now) && Object.isFrozen(now.terms)).toBe(true);
      expect((await c.find({ terms: `t${i}` })).map((d) => d._id)).toEqual([id]);
      expect(await c.find({ terms: 'all' })).toEqual([]);
      expect((await c.find({ groupSlug: 'g1' }, { sort: { activityAt: -1, _id: -1 }, limit: 1 }))[0]?.activityAt).toBe(view(100 + i).activityAt);
    }
    // What a reader was handed never changes under it.
    expect(first.forecasts).toBe(0);
    // A unit that fails: readers meanwhile, and after it, see the last commit.
    let release!: () => void;
    const paused = new Promise<void>((resolve) => (release = resolve));
    let midway!: () => void;
    const reachedMidway = new Promise<void>((resolve) => (midway = resolve));
    const failing = store.transaction(async (unit) => {
      const c = unit.collection(views);
      await c.updateOne({ _id: id }, { $inc: { forecasts: 100 }, $set: { terms: ['lost'] } });
      await c.find({ terms: 'lost' });
      midway();
      await paused;
      throw new Error('the batch failed');
    });
    await reachedMidway;
    expect((await c.findOne({ _id: id }))?.forecasts).toBe(33);
    release();
    await expect(failing).rejects.toThrow('the batch failed');
    expect((await c.findOne({ _id: id }))?.forecasts).toBe(33);
    expect(await c.find({ terms: 'lost' })).toEqual([]);
    await store.transaction((unit) => unit.collection(views).updateOne({ _id: id }, { $inc: { forecasts: 1 } }));
    expect((await c.findOne({ _id: id }))?.forecasts).toBe(34);
    // Deleted, then written again.
    await store.transaction((unit) => unit.collection(views).deleteOne({ _id: id }));
    expect(await c.findOne({ _id: id })).toBeNull();
    await store.transaction((unit) => unit.collection(views).insertOne({ ...view(1), forecasts: 7 }));
    expect((await c.findOne({ _id: id }))?.forecasts).toBe(7);
    expect((await c.find({ terms: 'all' })).map((d) => d._id)).toEqual([id]);
  });

  /**
   * Opens a store on a file holding `docs` (written through `writtenWith`), then a unit that is the
   * first to name the collection in that process, as `openedWith` declares it (its table set up
   * inside the unit), and works in it (`inUnit`); runs `meanwhile` outside it while it is open,
   * then lets it commit. Returns the store's collection, and its committed version before the
   * unit and after it.
   */
  async function firstNamedInAUnit(
    docs: View[],
    specs: { writtenWith: CollectionSpec<View>; openedWith: CollectionSpec<View> },
    inUnit: (c: Collection<View>) => Promise<unknown>,
    meanwhile: (c: Collection<View>) => Promise<void>,
  ): Promise<{ c: Collection<View>; versions: [number | null, number | null] }> {
    const path = file();
    const before = openSqliteDocumentStore({ path });
    for (const doc of docs) await before.collection(specs.writtenWith).insertOne(doc);
    await before.close();
    const store = open(path);
    const versionBefore = store.committedVersion();
    let release!: () => void;
    const paused = new Promise<void>((resolve) => (release = resolve));
    let midway!: () => void;
    const reachedMidway = new Promise<void>((resolve) => (midway = resolve));
    const unit = store.transaction(async (u) => {
      await inUnit(u.collection(specs.openedWith));
      midway();
      await paused;
    });
    await reachedMidway;
    const c = store.collection(specs.openedWith);
    try {
      await meanwhile(c);
    } finally {
      release();
      await unit;
    }
    return { c, versions: [versionBefore, store.committedVersion()] };
  }
  const bump = (c: Collection<View>) => c.updateOne({ _id: view(1)._id }, { $inc: { forecasts: 1 } });
  const plain = collectionSpec<View>({ name: 'views', arrays: ['terms'] });

  it('a collection a unit opens first, on a file that holds it: readers outside see what is committed meanwhile', async () => {
    const { c } = await firstNamedInAUnit([view(1)], { writtenWith: views, openedWith: views }, bump, async (outside) => {
      expect((await outside.findOne({ _id: view(1)._id }))?.forecasts).toBe(0);
      expect((await outside.find({ groupSlug: 'g1' })).map((d) => d._id)).toEqual([view(1)._id]);
      expect(await outside.countDocuments({})).toBe(1);
      expect((await outside.byIds([view(1)._id])).size).toBe(1);
    });
    expect((await c.findOne({ _id: view(1)._id }))?.forecasts).toBe(1);
  });

  it('a collection a unit opens first with new index columns, or an array side table: readers outside read it as empty, without errors, until it commits', async () => {
    // New index columns and a side table; new index columns only; a side table only.
    const specs = [plain, collectionSpec<View>({ name: 'views', arrays: ['terms'], indexes: [{ keys: { terms: 1 } }] }), collectionSpec<View>({ ...views, indexes: (views.indexes ?? []).slice(0, 2) })];
    for (const writtenWith of specs) {
      const { c } = await firstNamedInAUnit([view(1), view(2), view(3)], { writtenWith, openedWith: views }, bump, async (outside) => {
        expect(await outside.find({ groupSlug: 'g1' }, { sort: { activityAt: -1, _id: -1 }, limit: 2 })).toEqual([]);
        expect(await outside.find({ terms: 'all' }, { sort: { activityAt: -1, _id: -1 }, limit: 2 })).toEqual([]);
        expect(await outside.countDocuments({ groupSlug: 'g1' })).toBe(0);
        expect(await outside.countBy({}, 'groupSlug')).toEqual(new Map());
      });
      expect((await c.find({ terms: 'all' }, { sort: { activityAt: -1, _id: -1 } })).map((d) => `${d._id}:${d.forecasts}`)).toEqual(['c00003:0', 'c00002:0', 'c00001:1']);
      expect(await c.countDocuments({ groupSlug: 'g1' })).toBe(1);
    }
  });

  it('a collection a unit opens first with an index more, or one less, over the same columns: readers outside see what is committed meanwhile', async () => {
    const more = collectionSpec<View>({ ...views, indexes: [...(views.indexes ?? []), { keys: { groupSlug: 1, _id: 1 } }] });
    // Without the (groupSlug, activityAt, _id) index, and so without its groupSlug column.
    const fewer = collectionSpec<View>({ ...views, indexes: (views.indexes ?? []).slice(1) });
    for (const [writtenWith, openedWith] of [[views, more], [more, views], [views, fewer]] as const) {
      await firstNamedInAUnit([view(1), view(21)], { writtenWith, openedWith }, bump, async (outside) => {
        expect((await outside.findOne({ _id: view(21)._id }))?._id).toBe(view(21)._id);
        expect((await outside.find({ groupSlug: 'g1' }, { sort: { activityAt: -1, _id: -1 } })).map((d) => `${d._id}:${d.forecasts}`)).toEqual(['c00021:0', 'c00001:0']);
        expect(await outside.countDocuments({})).toBe(2);
      });
    }
  });

  it('once a unit that opened a collection unreadable outside ends, even one that only read, the committed version has moved', async () => {
    const { c, versions } = await firstNamedInAUnit([view(1)], { writtenWith: plain, openedWith: views }, (u) => u.findOne({ _id: view(1)._id }), async (outside) => {
      expect(await outside.countDocuments({})).toBe(0);
    });
    expect(await c.countDocuments({})).toBe(1);
    expect(versions[1]).not.toBe(versions[0]);
  });

  it('a write outside a unit waits for the open unit and is not part of it', async () => {
    const store = open();
    const c = store.collection(views);
    let release!: () => void;
    const paused = new Promise<void>((resolve) => (release = resolve));
    const unit = store.transaction(async (unit) => {
      const c = unit.collection(views);
      await c.insertOne(view(1));
      await paused;
      throw new Error('rolled back');
    });
    const outside = c.insertOne(view(2));
    release();
    await expect(unit).rejects.toThrow('rolled back');
    await outside;
    expect((await c.find({})).map((d) => d._id)).toEqual([view(2)._id]);
  });

  it('a unit after a rolled-back one, or after a drop, works on what is committed', async () => {
    const store = open();
    const c = store.collection(views);
    await store.transaction(async (unit) => unit.collection(views).insertOne(view(1)));
    const id = view(1)._id;
    const failed = store.transaction(async (unit) => {
      const c = unit.collection(views);
      await c.updateOne({ _id: id }, { $inc: { forecasts: 5 } });
      await c.insertOne(view(2));
      throw new Error('the batch failed');
    });
    await expect(failed).rejects.toThrow('the batch failed');
    await store.transaction(async (unit) => {
      const c = unit.collection(views);
      await c.updateOne({ _id: id }, { $inc: { forecasts: 1 } });
      expect(await c.findOne({ _id: view(2)._id })).toBeNull();
    });
    expect((await c.findOne({ _id: id }))?.forecasts).toBe(1);
    await store.drop(['views']);
    await store.transaction(async (unit) => {
      const c = unit.collection(views);
      expect(await c.findOne({ _id: id })).toBeNull();
      await c.updateOne({ _id: id }, { $inc: { forecasts: 1 } }, { upsert: true });
    });
    expect((await c.findOne({ _id: id }))?.forecasts).toBe(1);
  });

  it("a private file (a rebuild thread's) keeps its journal in memory, undoes a failed attempt's rows, and is a shared file in WAL mode once opened so", async () => {
    const path = file();
    const store = openSqliteDocumentStore({ path, privateFile: true, backgroundCheckpoints: false });
    await store.beginBulkLoad(['views']);
    for (let i = 1; i <= 20; i++) {
      await store.transaction(
        async (unit) => {
          await unit.attempt(() => unit.collection(views).insertOne(view(i)));
          if (i !== 10) return;
          const failed = unit.attempt(async () => {
            const c = unit.collection(views);
            await c.updateOne({ _id: view(1)._id }, { $inc: { forecasts: 7 } });
            // A count writes the unit's documents to the file first: the attempt's rows are there when it fails.
            expect(await c.countDocuments({ forecasts: 7 })).toBe(1);
            throw new Error('the projection failed');
          });
          await expect(failed).rejects.toThrow('the projection failed');
          expect(await unit.collection(views).countDocuments({ forecasts: 7 })).toBe(0);
        },
        { defer: true },
      );
    }
    // No log beside the file: the journal is in memory.
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(existsSync(`${path}-journal`)).toBe(false);
    await store.endBulkLoad();
    await store.close();
    const mode = () => {
      const db = new Database(path, { readonly: true });
      try {
        return db.pragma('journal_mode', { simple: true });
      } finally {
        db.close();
      }
    };
    expect(mode()).not.toBe('wal');
    const shared = open(path);
    expect(await shared.collection(views).countDocuments({})).toBe(20);
    expect(await shared.collection(views).countDocuments({ forecasts: 7 })).toBe(0);
    expect((await shared.collection(views).find({ terms: 'w1' })).length).toBe(7);
    await shared.close();
    expect(mode()).toBe('wal');
  });

  it('a copy of a collection from a finished file answers as the original, array queries from its side table too', async () => {
    const original = open();
    await original.beginBulkLoad(['views']);
    for (let i = 1; i <= 30; i++) await original.transaction((unit) => unit.collection(views).insertOne(view(i)), { defer: true });
    await original.endBulkLoad();
    const copy = open();
    expect(await copy.copyFrom(original, { collections: [views] })).toBe(30);
    const asked = async (store: SqliteDocumentStore) => ({
      w1: (await store.collection(views).find({ terms: 'w1' }, { sort: { _id: 1 } })).map((d) => d._id),
      some: (await store.collection(views).find({ terms: { $in: ['w0', 'w2'] }, groupSlug: 'g1' }, { sort: { activityAt: -1, _id: -1 }, limit: 5 })).map((d) => d._id),
      all: await store.collection(views).countDocuments({ terms: 'all' }),
    });
    const expected = await asked(original);
    expect(expected.w1).toHaveLength(10);
    expect(await asked(copy)).toEqual(expected);
    expect(copy.explain(views, { terms: 'w1' }).join(' ')).toContain('views$terms');
    // Its later writes keep the side table current.
    await copy.collection(views).updateOne({ _id: view(1)._id }, { $set: { terms: ['w1', 'moved'] } });
    expect((await copy.collection(views).find({ terms: 'moved' })).map((d) => d._id)).toEqual([view(1)._id]);
  });

  it('a bulk load that never ended (stopped, crashed) has its array side tables filled when the file is opened again', async () => {
    const path = file();
    const store = openSqliteDocumentStore({ path });
    await store.beginBulkLoad(['views']);
    for (let i = 1; i <= 5; i++) await store.transaction((unit) => unit.collection(views).insertOne(view(i)));
    // Closed without endBulkLoad: the rows committed, their side rows were never written.
    await store.close();
    const again = open(path);
    const c = again.collection(views);
    expect((await c.find({ terms: 'all' }, { sort: { _id: 1 } })).map((d) => d._id)).toEqual([1, 2, 3, 4, 5].map((i) => view(i)._id));
    expect(await c.countDocuments({ terms: 'w1' })).toBe(2);
    expect(again.explain(views, { terms: 'all' }).join(' ')).toContain('views$terms');
    // Once filled, the next open has nothing left to fill, and writes keep the side table current.
    await c.updateOne({ _id: view(1)._id }, { $set: { terms: ['solo'] } });
    await again.close();
    const third = open(path);
    expect((await third.collection(views).find({ terms: 'solo' })).map((d) => d._id)).toEqual([view(1)._id]);
    expect(await third.collection(views).countDocuments({ terms: 'all' })).toBe(4);
  });

  it('keeps data and builds new index columns from it when reopened with more indexes', async () => {
    const path = file();
    const plain = collectionSpec<View>({ name: 'views', arrays: ['terms'] });
    const first = openSqliteDocumentStore({ path });
    for (let i = 0; i < 50; i++) await first.collection(plain).insertOne(view(i));
    await first.close();
    const second = open(path);
    const c = second.collection(views);
    expect((await c.find({ groupSlug: 'g3' }, { sort: { activityAt: -1, _id: -1 } })).map((d) => d._id)).toEqual(['c00043', 'c00023', 'c00003']);
    expect(await c.countDocuments({ terms: 'w1' })).toBe(17);
    expect(second.explain(views, { groupSlug: 'g3' }, { sort: { activityAt: -1, _id: -1 }, limit: 2 }).join('\n')).toMatch(/USING (COVERING )?INDEX/);
  });

  it('serves sort + limit over $in values as a merge of index ranges, and the rest from indexes, without sorting', async () => {
    const store = open();
    const c = store.collection(views);
    await store.transaction(async (unit) => {
      const c = unit.collection(views);
      for (let i = 0; i < 2000; i++) await c.insertOne(view(i));
    });
    const sort = { activityAt: -1, _id: -1 } as const;
    const following = { groupSlug: { $in: ['g1', 'g5', 'g7'] } };
    const plan = store.explain(views, following, { sort, limit: 101 }).join('\n');
    expect(plan).toContain('MERGE (UNION ALL)');
    expect(plan).not.toContain('TEMP B-TREE');
    const page = await c.find(following, { sort, limit: 5 });
    expect(page.map((d) => d._id)).toEqual(['c01987', 'c01985', 'c01981', 'c01967', 'c01965']);
    const spicy = store.explain(views, { groupSlug: { $nin: ['g2'] } }, { sort, limit: 101 }).join('\n');
    expect(spicy).toMatch(/SCAN views USING INDEX/);
    expect(spicy).not.toContain('TEMP B-TREE');
    expect(store.explain(views, { terms: 'w2' }, {}).join('\n')).toMatch(/views\$terms/);
  });

  it('finds the newest documents holding a common array value by walking the sort order, and a rare one from its few documents', async () => {
    const store = open();
    const c = store.collection(views);
    await store.transaction(async (unit) => {
      const c = unit.collection(views);
      for (let i = 0; i < 2000; i++) await c.insertOne({ ...view(i), terms: i % 2 === 0 ? ['even'] : i % 400 === 7 ? ['odd', 'rare'] : ['odd'] });
    });
    const sort = { activityAt: -1, _id: -1 } as const;
    const common = store.explain(views, { $and: [{ terms: 'even' }, { groupSlug: { $nin: ['g3'] } }] }, { sort, limit: 101 }).join('\n');
    expect(common).toMatch(/SCAN views USING INDEX/);
    expect(common).not.toContain('TEMP B-TREE');
    const rare = store.explain(views, { terms: 'rare' }, { sort, limit: 101 }).join('\n');
    expect(rare).toMatch(/views\$terms/);
    // Either way, the same answers.
    expect((await c.find({ $and: [{ terms: 'even' }, { groupSlug: { $nin: ['g18'] } }] }, { sort, limit: 3 })).map((d) => d._id)).toEqual(['c01996', 'c01994', 'c01992']);
    expect((await c.find({ terms: 'rare' }, { sort, limit: 3 })).map((d) => d._id)).toEqual(['c01607', 'c01207', 'c00807']);
    expect((await c.find({ terms: { $eq: 'odd' } }, { sort, limit: 2, skip: 1 })).map((d) => d._id)).toEqual(['c01997', 'c01995']);
  });

  it('answers the same find again after each commit to its collection, with what that commit wrote', async () => {
    const store = open();
    const c = store.collection(views);
    const sort = { activityAt: -1, _id: -1 } as const;
    const newest = async () => (await c.find({ groupSlug: { $in: ['g1', 'g2'] } }, { sort, limit: 2 })).map((d) => `${d._id}:${d.forecasts}`);
    await store.transaction(async (unit) => {
      const c = unit.collection(views);
      for (let i = 0; i < 100; i++) await c.insertOne(view(i));
    });
    expect(await newest()).toEqual(['c00082:0', 'c00081:0']);
    expect(await newest()).toEqual(['c00082:0', 'c00081:0']);
    await store.transaction(async (unit) => {
      const c = unit.collection(views);
      await c.updateOne({ _id: 'c00081' }, { $inc: { forecasts: 1 } });
    });
    expect(await newest()).toEqual(['c00082:0', 'c00081:1']);
    await c.insertOne({ ...view(101), groupSlug: 'g2' });
    expect(await newest()).toEqual(['c00101:0', 'c00082:0']);
    await c.deleteOne({ _id: 'c00101' });
    expect(await newest()).toEqual(['c00082:0', 'c00081:1']);
    await store.drop(['views']);
    expect(await newest()).toEqual([]);
  });

  it('a store told what a writer elsewhere committed reads those documents and answers again, and only those', async () => {
    // The projections thread's writer and the main thread's store of one file (system/src/projections-thread).
    const path = file();
    const told: [string, readonly string[] | null][] = [];
    const writer = openSqliteDocumentStore({ path, checkpointedElsewhere: true, onChanged: (table, ids) => told.push([table, ids]) });
    opened.push(writer);
    const reader = open(path);
    await writer.transaction(async (unit) => {
      const c = unit.collection(views);
      for (let i = 0; i < 10; i++) await c.insertOne(view(i));
    });
    const read = reader.collection(views);
    const sort = { activityAt: -1, _id: -1 } as const;
    const newest = async () => (await read.find({ groupSlug: { $in: ['g1', 'g2'] } }, { sort, limit: 2 })).map((d) => `${d._id}:${d.forecasts}`);
    const tell = () => {
      for (const [table, ids] of told.splice(0)) reader.changedElsewhere(table, ids);
    };
    tell();
    expect(await newest()).toEqual(['c00002:0', 'c00001:0']);
    expect((await read.findOne({ _id: 'c00001' }))?.forecasts).toBe(0);
    const version = reader.committedVersion();

    await writer.transaction(async (unit) => {
      await unit.collection(views).updateOne({ _id: 'c00001' }, { $inc: { forecasts: 1 } });
    });
    expect(told).toEqual([['views', ['c00001']]]);
    // Before it is told: an answer made now (cached documents, rows read after the commit) is not of the version before.
    expect(reader.committedVersion()).not.toBe(version);
    tell();
    expect((await read.findOne({ _id: 'c00001' }))?.forecasts).toBe(1);
    expect(await newest()).toEqual(['c00002:0', 'c00001:1']);

    await writer.drop(['views']);
    expect(told).toEqual([['views', null]]);
    tell();
    expect(await read.findOne({ _id: 'c00001' })).toBeNull();
    expect(await newest()).toEqual([]);

    // A writer that ended without telling: everything is read again.
    await writer.transaction(async (unit) => {
      await unit.collection(views).insertOne(view(1));
    });
    told.splice(0);
    expect(await read.findOne({ _id: 'c00001' })).toBeNull();
    reader.allChangedElsewhere();
    expect((await read.findOne({ _id: 'c00001' }))?.forecasts).toBe(0);
  });

  it('keeps the answers of two finds apart whenever their filters differ, however alike they look', async () => {
    interface Item extends Doc {
      n?: number | null;
      s?: string;
    }
    const items = collectionSpec<Item>({ name: 'items' });
    const docs: Item[] = [{ _id: 'none', n: null }, { _id: 'one', n: 1 }, { _id: 'zero', n: 0 }, { _id: 'missing' }, { _id: 'forged', s: '\u0000undefined' }, { _id: 're', s: 'r"x""i"' }, { _id: 'text', s: 'x' }, { _id: 'epoch', s: new Date(0).toISOString() }];
    const filled = async () => {
      const c = openSqliteDocumentStore({ path: ':memory:' }).collection(items);
      for (const doc of docs) await c.insertOne(doc);
      return c;
    };
    const ids = async (c: Awaited<ReturnType<typeof filled>>, filter: unknown) => (await c.find(filter as Parameters<typeof c.find>[0])).map((d) => d._id).sort();
    // Filters a key could confuse: JSON writes NaN and the infinities as null, a Date as its
    // string, a RegExp as {}. (It also leaves out undefined, which no filter may hold: the
    // conformance suite's "undefined".)
    const pairs: [unknown, unknown][] = [
      [{ n: NaN }, { n: null }],
      [{ n: { $gt: -Infinity } }, { n: { $gt: Infinity } }],
      [{ n: { $ne: Infinity } }, { n: { $ne: null } }],
      [{ s: { $regex: /x/i } }, { s: 'r"x""i"' }],
      [{ s: new Date(0) }, { s: new Date(0).toISOString() }],
    ];
    const shared = await filled();
    for (const [i, [first, second]] of pairs.entries()) {
      // Asked on a store that never saw another query, and on one that was just asked the twin.
      const [alone1, alone2] = [await ids(await filled(), first), await ids(await filled(), second)];
      expect(alone1, `pair ${i} answers differently alone`).not.toEqual(alone2);
      expect(await ids(shared, first)).toEqual(alone1);
      expect(await ids(shared, second)).toEqual(alone2);
      expect(await ids(shared, first)).toEqual(alone1);
    }
  });

  it('refuses documents with an undeclared array field, and collections declared twice differently', async () => {
    const store = open();
    const loose = store.collection(collectionSpec<Doc & { list: string[] }>({ name: 'loose' }));
    await expect(loose.insertOne({ _id: 'x', list: ['a'] })).rejects.toThrow(/declare it in the collection's arrays/);
    expect(() => store.collection(collectionSpec<Doc & { list: string[] }>({ name: 'loose', arrays: ['list'] }))).toThrow(/declared twice/);
  });

  it('refuses an update that makes an undeclared field an array, whatever else it names, and keeps the document as it was', async () => {
    const store = open();
    type Loose = Doc & { n: number; list?: string[]; deep?: { list?: string[] }; tags: string[] };
    const spec = collectionSpec<Loose>({ name: 'loose', arrays: ['tags'] });
    const loose = store.collection(spec);
    await loose.insertOne({ _id: 'x', n: 1, tags: [] });
    const updates = [
      { $set: { list: ['a'] } },
      { $inc: { n: 1 }, $push: { list: 'a' } },
      { $addToSet: { list: 'a' }, $set: { 'deep.list': ['b'] } },
      { $setOnInsert: { n: 5 }, $set: { list: [] } },
      { $inc: { n: 1 }, $max: { list: ['a'] } },
      { $min: { list: ['a'] } },
    ];
    for (const update of updates) await expect(loose.updateOne({ _id: 'x' }, update), JSON.stringify(update)).rejects.toThrow(/loose\.list holds an array: declare it/);
    await store.transaction(async (unit) => {
      const inUnit = unit.collection(spec);
      await expect(inUnit.updateMany({}, { $push: { list: 'a' } })).rejects.toThrow(/declare it/);
      await expect(inUnit.updateOne({ _id: 'x' }, { $inc: { n: 1 }, $set: { list: ['a'] } })).rejects.toThrow(/declare it/);
      // The unit goes on with the document as it was before the refused updates.
      expect(await inUnit.findOne({ _id: 'x' })).toEqual({ _id: 'x', n: 1, tags: [] });
    });
    expect(await loose.findOne({ _id: 'x' })).toEqual({ _id: 'x', n: 1, tags: [] });
    // Arrays below a field, and in the declared ones, are the document's own business.
    await loose.updateOne({ _id: 'x' }, { $set: { 'deep.list': ['b'] }, $push: { tags: 't' } });
    expect(await loose.findOne({ _id: 'x' })).toEqual({ _id: 'x', n: 1, tags: ['t'], deep: { list: ['b'] } });
  });

  it('refuses every change to a document written while one of its arrays was declared, once it no longer is', async () => {
    const path = file();
    type Loose = Doc & { n: number; list: string[] };
    const before = open(path);
    await before.collection(collectionSpec<Loose>({ name: 'loose', arrays: ['list'] })).insertOne({ _id: 'x', n: 1, list: ['a'] });
    await before.close();
    const after = open(path);
    const loose = after.collection(collectionSpec<Loose>({ name: 'loose' }));
    // Read as it is; an update of another field is refused as the array's own would be.
    expect(await loose.findOne({ _id: 'x' })).toEqual({ _id: 'x', n: 1, list: ['a'] });
    await expect(loose.updateOne({ _id: 'x' }, { $inc: { n: 1 } })).rejects.toThrow(/loose\.list holds an array: declare it/);
    await after.transaction(async (unit) => {
      await expect(unit.collection(collectionSpec<Loose>({ name: 'loose' })).updateOne({ _id: 'x' }, { $inc: { n: 1 } })).rejects.toThrow(/declare it/);
    });
    expect(await loose.findOne({ _id: 'x' })).toEqual({ _id: 'x', n: 1, list: ['a'] });
  });

  it('refuses an upsert whose filter names two values of _id, and holds each document under its own', async () => {
    const store = open();
    const c = store.collection(views);
    await store.transaction(async (unit) => {
      const inUnit = unit.collection(views);
      await expect(inUnit.updateOne({ _id: 'x', $and: [{ _id: 'y' }] }, { $set: { forecasts: 1 } }, { upsert: true })).rejects.toThrow(/two values of _id: x and y/);
      expect(await inUnit.findOne({ _id: 'x' })).toBeNull();
      expect((await inUnit.updateOne({ _id: 'x' }, { $inc: { forecasts: 1 } })).matchedCount).toBe(0);
      // One _id, inside an $and: the new document's, and it is found by it.
      expect((await inUnit.updateOne({ $and: [{ _id: 'y' }] }, { $set: { forecasts: 2 } }, { upsert: true })).upsertedId).toBe('y');
      expect((await inUnit.updateOne({ _id: 'y' }, { $inc: { forecasts: 1 } })).matchedCount).toBe(1);
    });
    expect(await c.find({})).toEqual([{ _id: 'y', forecasts: 3 }]);
    await c.deleteOne({ _id: 'y' });
    // A condition on _id that only inherits $eq pins nothing down: its own $in decides.
    await c.insertOne(view(1));
    const inherited = Object.assign(Object.create({ $eq: view(1)._id }) as object, { $in: ['z'] });
    expect((await c.updateOne({ _id: inherited as never }, { $inc: { forecasts: 1 } })).matchedCount).toBe(0);
    expect((await c.findOne({ _id: view(1)._id }))?.forecasts).toBe(0);
  });

  it('refuses a write made after its unit of work ended, and keeps reads true to what is committed', async () => {
    const store = open();
    const c = store.collection(views);
    await c.insertOne(view(1));
    expect((await c.findOne({ _id: 'c00001' }))?.forecasts).toBe(0);
    let late!: Promise<unknown>;
    await store.transaction(async (unit) => {
      const c = unit.collection(views);
      await c.updateOne({ _id: 'c00001' }, { $set: { forecasts: 1 } });
      // Not awaited inside the unit: it would commit on its own, outside the unit's atomicity.
      late = new Promise((resolve) => setTimeout(resolve, 20)).then(() => c.updateOne({ _id: 'c00001' }, { $set: { forecasts: 2 } }));
    });
    await expect(late).rejects.toThrow(/after its unit of work ended/);
    expect((await c.findOne({ _id: 'c00001' }))?.forecasts).toBe(1);
  });

  for (const where of ['memory', 'file'] as const) {
    it(`keeps nothing of an update that fails partway, in the unit, in what readers get and in later units (${where})`, async () => {
      const store = where === 'memory' ? openSqliteDocumentStore({ path: ':memory:' }) : open();
      if (where === 'memory') opened.push(store);
      const c = store.collection(views);
      const id = view(1)._id;
      await c.insertOne(view(1));
      await store.transaction(async (unit) => {
        const c = unit.collection(views);
        await c.updateOne({ _id: id }, { $inc: { forecasts: 1 } });
        // A query writes the unit's documents to the table first.
        await c.find({ groupSlug: 'g1' });
        // $set applies, then $inc of a text field fails: as a projection's failing event, caught.
        await expect(c.updateOne({ _id: id }, { $set: { ghost: 'boo' }, $inc: { question: 1 } } as never)).rejects.toThrow(/\$inc/);
        expect(await c.findOne({ _id: id })).not.toHaveProperty('ghost');
      });
      expect(await c.findOne({ _id: id })).toMatchObject({ forecasts: 1 });
      expect(await c.findOne({ _id: id })).not.toHaveProperty('ghost');
      await store.transaction((unit) => unit.collection(views).updateOne({ _id: id }, { $inc: { forecasts: 1 } }));
      expect(await c.findOne({ _id: id })).not.toHaveProperty('ghost');
      expect(await c.countDocuments({ ghost: 'boo' } as never)).toBe(0);
      expect((await c.findOne({ _id: id }))?.forecasts).toBe(2);
    });

    it(`answers what the database holds after a commit of values JSON changes: not a number, -0 (${where})`, async () => {
      const store = where === 'memory' ? openSqliteDocumentStore({ path: ':memory:' }) : open();
      if (where === 'memory') opened.push(store);
      const c = store.collection(views);
      const id = view(1)._id;
      await c.insertOne(view(1));
      await store.transaction((unit) => unit.collection(views).updateOne({ _id: id }, { $set: { forecasts: Number.NaN, question: 'q' } }));
      expect((await c.findOne({ _id: id }))?.forecasts).toBeNull();
      await store.transaction((unit) => unit.collection(views).updateOne({ _id: id }, { $set: { forecasts: -0 } }));
      expect(Object.is((await c.findOne({ _id: id }))?.forecasts, 0)).toBe(true);
      // The next unit starts from what is stored too.
      await store.transaction((unit) => unit.collection(views).updateOne({ _id: id }, { $inc: { forecasts: 2 } }));
      expect((await c.findOne({ _id: id }))?.forecasts).toBe(2);
    });
  }

  describe("deferred units of work (a rebuild's batches)", () => {
    const forecastsOf = async (store: SqliteDocumentStore, id: string) => (await store.collection(views).findOne({ _id: id }))?.forecasts;

    it('commit together: readers see none of them until a unit that does not defer begins, while each deferred unit sees the ones before it', async () => {
      const store = open();
      const c = store.collection(views);
      await c.insertOne(view(1));
      await store.beginBulkLoad([]);
      await store.transaction(async (unit) => {
        const c = unit.collection(views);
        await c.updateOne({ _id: 'c00001' }, { $inc: { forecasts: 1 } });
        await c.insertOne(view(2));
      }, { defer: true });
      const seenInside = await store.transaction(async (unit) => {
        const c = unit.collection(views);
        await c.updateOne({ _id: 'c00001' }, { $inc: { forecasts: 1 } });
        return [(await c.findOne({ _id: 'c00001' }))?.forecasts, await c.countDocuments({})];
      }, { defer: true });
      expect(seenInside).toEqual([2, 2]);
      expect(await forecastsOf(store, 'c00001')).toBe(0);
      expect(await c.findOne({ _id: 'c00002' })).toBeNull();
      await store.transaction(async (unit) => {
        const c = unit.collection(views);
        await c.updateOne({ _id: 'c00002' }, { $inc: { forecasts: 10 } });
      });
      expect(await forecastsOf(store, 'c00001')).toBe(2);
      expect(await forecastsOf(store, 'c00002')).toBe(10);
    });

    it('commit at the end of the bulk load, and at close', async () => {
      const path = file();
      const store = open(path);
      const c = store.collection(views);
      await store.beginBulkLoad(['views']);
      await store.transaction((unit) => unit.collection(views).insertOne(view(1)), { defer: true });
      expect(await c.countDocuments({})).toBe(0);
      await store.endBulkLoad();
      expect(await c.countDocuments({})).toBe(1);
      await store.beginBulkLoad([]);
      await store.transaction((unit) => unit.collection(views).insertOne(view(2)), { defer: true });
      await store.close();
      const reopened = open(path);
      expect(await reopened.collection(views).countDocuments({})).toBe(2);
    });

    it('that fails rolls back every deferred unit not committed yet and says so; the store then takes no write until opened again', async () => {
      const path = file();
      const store = open(path);
      const c = store.collection(views);
      await c.insertOne(view(1));
      await store.transaction((unit) => unit.collection(views).updateOne({ _id: 'c00001' }, { $inc: { forecasts: 1 } }), { defer: true });
      const failing = store.transaction(async (unit) => {
        const c = unit.collection(views);
        await c.insertOne(view(2));
        throw new Error('disk full');
      }, { defer: true });
      await expect(failing).rejects.toBeInstanceOf(DeferredUnitsLostError);
      await expect(failing).rejects.toThrow(/disk full/);
      expect(await forecastsOf(store, 'c00001')).toBe(0);
      expect(await c.findOne({ _id: 'c00002' })).toBeNull();
      // Whoever deferred them counted them as applied: nothing may commit after them.
      const lost = await failing.catch((error: unknown) => error);
      for (const write of [
        () => store.transaction((unit) => unit.collection(views).updateOne({ _id: 'c00001' }, { $inc: { forecasts: 5 } }), { defer: true }),
        () => store.transaction((unit) => unit.collection(views).updateOne({ _id: 'c00001' }, { $inc: { forecasts: 5 } })),
        () => c.insertOne(view(3)),
        () => store.drop(['views']),
        () => store.endBulkLoad(),
      ]) {
        await expect(write()).rejects.toBe(lost);
      }
      expect(await c.countDocuments({})).toBe(1);
      await store.close();
      const reopened = open(path);
      await reopened.collection(views).updateOne({ _id: 'c00001' }, { $inc: { forecasts: 5 } });
      expect(await forecastsOf(reopened, 'c00001')).toBe(5);
    });

    it('commit once they hold more than the documents allowed', async () => {
      const store = openSqliteDocumentStore({ path: file(), deferredDocuments: 3 });
      opened.push(store);
      const c = store.collection(views);
      await store.transaction((unit) => unit.collection(views).insertOne(view(1)), { defer: true });
      await store.transaction((unit) => unit.collection(views).insertOne(view(2)), { defer: true });
      expect(await c.countDocuments({})).toBe(0);
      await store.transaction(async (unit) => {
        const c = unit.collection(views);
        await c.insertOne(view(3));
        await c.insertOne(view(4));
      }, { defer: true });
      expect(await c.countDocuments({})).toBe(4);
      await store.transaction((unit) => unit.collection(views).insertOne(view(5)), { defer: true });
      expect(await c.countDocuments({})).toBe(4);
    });

    it('let the event loop run while their commit writes many documents', async () => {
      const store = open();
      const c = store.collection(views);
      await store.beginBulkLoad(['views']);
      await store.transaction(async (unit) => {
        const c = unit.collection(views);
        for (let i = 0; i < 12_000; i++) await c.insertOne(view(i));
      }, { defer: true });
      let turns = 0;
      let committed = false;
      const turn = () => {
        turns++;
        if (!committed) setImmediate(turn);
      };
      setImmediate(turn);
      await store.endBulkLoad();
      committed = true;
      expect(turns).toBeGreaterThanOrEqual(2);
      expect(await c.countDocuments({})).toBe(12_000);
    });

    it('refuse a write their code makes after the unit returned, though the unit goes on', async () => {
      const store = open();
      const c = store.collection(views);
      let late!: Promise<unknown>;
      await store.transaction(async (unit) => {
        const c = unit.collection(views);
        await c.insertOne(view(1));
        late = new Promise((resolve) => setTimeout(resolve, 20)).then(() => c.insertOne(view(2)));
      }, { defer: true });
      await expect(late).rejects.toThrow(/after its unit of work ended/);
      await store.transaction(async () => undefined);
      expect((await c.find({})).map((v) => v._id)).toEqual(['c00001']);
    });

    it('answer in a bulk-loaded collection as committed units do, whether it started empty or not, and across commits', async () => {
      // Array queries (the `terms` index's side table) during the load, and once it ended.
      const byTerm = async (c: Collection<View>) => ({
        all: (await c.find({ terms: 'all' }, { sort: { _id: 1 } })).map((d) => d._id),
        some: (await c.find({ terms: { $in: ['w1', 'w2'] } }, { sort: { _id: 1 } })).map((d) => d._id),
        none: (await c.find({ terms: { $ne: 'w1' } }, { sort: { _id: 1 } })).map((d) => d._id),
      });
      const ops = async (store: SqliteDocumentStore, defer: boolean, seeded: boolean, bulk = true) => {
        const firstFour = async (c: Collection<View>) => {
          for (let i = 1; i <= 4; i++) await c.insertOne(view(i));
        };
        if (seeded) await firstFour(store.collection(views));
        if (bulk) await store.beginBulkLoad(['views']);
        // Each batch works in its unit's collection.
        const batches: ((c: Collection<View>) => Promise<unknown>)[] = [
          async (c) => (seeded ? c.countDocuments({}) : firstFour(c)),
          (c) => c.updateOne({ _id: 'c00010' }, { $inc: { forecasts: 1 }, $setOnInsert: { groupSlug: 'g1', activityAt: '2026-02-01T00:00:00.000Z', question: 'q', terms: ['all'] } }, { upsert: true }),
          (c) => c.updateOne({ _id: 'c00001' }, { $inc: { forecasts: 2 } }),
          async (c) => {
            await c.deleteOne({ _id: 'c00002' });
            await c.insertOne(view(11));
            return c.find({ terms: 'all' }, { sort: { activityAt: -1, _id: -1 }, limit: 3 });
          },
          (c) => c.updateMany({ groupSlug: 'g1' }, { $inc: { forecasts: 1 } }),
          (c) => c.replaceOne({ _id: 'c00012' }, view(12), { upsert: true }),
          (c) => c.updateOne({ _id: 'c00003' }, { $set: { terms: ['w2', 'moved'] } }),
          byTerm,
          (c) => c.findOne({ _id: 'c00003' }),
        ];
        const answers: unknown[] = [];
        for (const batch of batches) answers.push(await store.transaction((unit) => batch(unit.collection(views)), { defer }));
        if (bulk) await store.endBulkLoad();
        return { answers, docs: await store.collection(views).find({}, { sort: { _id: 1 } }), terms: await byTerm(store.collection(views)) };
      };
      const make = (deferredDocuments?: number) => {
        const store = openSqliteDocumentStore({ path: file(), ...(deferredDocuments ? { deferredDocuments } : {}) });
        opened.push(store);
        return store;
      };
      for (const seeded of [true, false]) {
        const expected = await ops(make(), false, seeded, false);
        expect(await ops(make(), false, seeded), seeded ? 'seeded, each unit committed' : 'empty, each unit committed').toEqual(expected);
        expect(await ops(make(), true, seeded), seeded ? 'seeded' : 'empty').toEqual(expected);
        // Committed every few documents: later units start on a collection that is no longer empty.
        expect(await ops(make(2), true, seeded), seeded ? 'seeded, small' : 'empty, small').toEqual(expected);
      }
      // Once loaded, array queries are served by the side table again.
      const store = make();
      await ops(store, true, false);
      expect(store.explain(views, { terms: 'w2' }).join(' ')).toContain('views$terms');
    });
  });
});
