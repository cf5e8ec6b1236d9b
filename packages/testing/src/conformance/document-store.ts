import { randomUUID } from 'node:crypto';
import { DuplicateKeyError, type Collection, type Doc, type DocumentStore, type Filter } from '@castie/platform';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** Collection names unique per test, so adapters on a shared server need no clean-up between tests. */
const unique = (prefix: string): string => `${prefix}_${randomUUID().slice(0, 8)}`;

const ids = (docs: readonly Doc[]): string[] => docs.map((d) => d._id).sort();
const inOrder = (docs: readonly Doc[]): string[] => docs.map((d) => d._id);

const JAN = new Date('2024-01-01T00:00:00.000Z');
const MAR = new Date('2024-03-01T00:00:00.000Z');
const MAY = new Date('2024-05-01T00:00:00.000Z');

/** Five people covering missing and null fields, arrays of values and of subdocuments, and dates. */
const people = (): Doc[] => [
  { _id: 'a', handle: 'ann', age: 31, city: 'Oslo', tags: ['x', 'y'], profile: { score: 10, lang: 'no' }, joined: JAN },
  { _id: 'b', handle: 'bob', age: 25, city: 'Bergen', tags: ['y'], profile: { score: 30, lang: 'en' }, joined: MAR },
  { _id: 'c', handle: 'cat', age: 31, city: 'Bergen', tags: [], profile: { score: 20, lang: 'no' }, joined: MAY },
  { _id: 'd', handle: 'Dan', age: 40, tags: ['z'], items: [{ sku: 'k1', qty: 2 }, { sku: 'k2', qty: 5 }] },
  { _id: 'e', handle: 'eve', age: 19, city: null, tags: ['x'], items: [{ sku: 'k2', qty: 1 }] },
];

/**
 * The contract every document store adapter fulfils (embedded mingo store, MongoDB): the subset of
 * MongoDB described in the port. `makeStore` gives a store per test (for a server: its own
 * database, or at least one that `dropAll` may empty); collection names are unique per test.
 */
export function describeDocumentStore(name: string, makeStore: () => DocumentStore | Promise<DocumentStore>): void {
  describe(`document store conformance: ${name}`, () => {
    let store: DocumentStore;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    const empty = (prefix = 'docs'): Collection => store.collection(unique(prefix));
    async function seeded(): Promise<Collection> {
      const c = empty('people');
      for (const doc of people()) await c.insertOne(doc);
      return c;
    }

    describe('insert and read', () => {
      it('finds an inserted document by _id, with dates intact', async () => {
        const c = await seeded();
        expect(c.name).toMatch(/^people_/);
        expect(await c.findOne({ _id: 'a' })).toEqual(people()[0]);
        expect((await c.findOne({ _id: 'a' }))?.joined).toBeInstanceOf(Date);
        expect(await c.findOne({ _id: 'nobody' })).toBeNull();
        expect(ids(await c.find({}))).toEqual(['a', 'b', 'c', 'd', 'e']);
      });

      it('rejects a second document with the same _id and keeps the first', async () => {
        const c = await seeded();
        const error = await c.insertOne({ _id: 'a', handle: 'impostor' }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(error).toMatchObject({ code: 11000 });
        expect(await c.findOne({ _id: 'a' })).toEqual(people()[0]);
        expect(await c.countDocuments()).toBe(5);
      });

      it('returns copies: changing a returned or inserted document does not change the stored one', async () => {
        const c = empty();
        const input = { _id: 'x', nested: { n: 1 }, list: [1] };
        await c.insertOne(input);
        input.nested.n = 99;
        input.list.push(99);
        const found = (await c.findOne({ _id: 'x' }))!;
        (found.nested as { n: number }).n = 42;
        (found.list as number[]).push(42);
        const [listed] = await c.find({ _id: 'x' });
        (listed!.nested as { n: number }).n = 43;
        const pushed = { v: 1 };
        await c.updateOne({ _id: 'x' }, { $push: { items: pushed }, $set: { meta: { tag: 't' } } });
        pushed.v = 2;
        expect(await c.findOne({ _id: 'x' })).toEqual({ _id: 'x', nested: { n: 1 }, list: [1], items: [{ v: 1 }], meta: { tag: 't' } });
      });

      it('counts documents, all or matching a filter', async () => {
        const c = await seeded();
        expect(await c.countDocuments()).toBe(5);
        expect(await c.countDocuments({})).toBe(5);
        expect(await c.countDocuments({ age: 31 })).toBe(2);
        expect(await c.countDocuments({ handle: 'nobody' })).toBe(0);
        expect(await empty().countDocuments()).toBe(0);
      });
    });

    describe('filters', () => {
      const cases: Array<[string, Filter, string[]]> = [
        ['equality', { city: 'Bergen' }, ['b', 'c']],
        ['equality on a dotted path', { 'profile.lang': 'no' }, ['a', 'c']],
        ['equality on a date', { joined: MAR }, ['b']],
        ['several fields at once', { city: 'Bergen', age: 31 }, ['c']],
        ['$eq', { age: { $eq: 31 } }, ['a', 'c']],
        ['$ne, which matches missing fields too', { city: { $ne: 'Bergen' } }, ['a', 'd', 'e']],
        ['$gt', { age: { $gt: 25 } }, ['a', 'c', 'd']],
        ['$gte', { age: { $gte: 25 } }, ['a', 'b', 'c', 'd']],
        ['$lt', { age: { $lt: 25 } }, ['e']],
        ['$lte', { age: { $lte: 25 } }, ['b', 'e']],
        ['a range', { age: { $gt: 19, $lt: 40 } }, ['a', 'b', 'c']],
        ['$gt on strings (binary order)', { handle: { $gt: 'bob' } }, ['c', 'e']],
        ['$gte on dates', { joined: { $gte: new Date('2024-02-01T00:00:00.000Z') } }, ['b', 'c']],
        ['$in', { city: { $in: ['Oslo', 'Bergen'] } }, ['a', 'b', 'c']],
        ['$in with null, which matches missing fields', { city: { $in: ['Oslo', null] } }, ['a', 'd', 'e']],
        ['$nin', { city: { $nin: ['Oslo', 'Bergen'] } }, ['d', 'e']],
        ['$exists: true, which counts null as present', { city: { $exists: true } }, ['a', 'b', 'c', 'e']],
        ['$exists: false', { city: { $exists: false } }, ['d']],
        ['null, which matches missing fields', { city: null }, ['d', 'e']],
        ['$and', { $and: [{ age: { $gte: 25 } }, { tags: 'y' }] }, ['a', 'b']],
        ['$or', { $or: [{ city: 'Oslo' }, { age: { $lt: 20 } }] }, ['a', 'e']],
        ['$or next to a field', { age: 31, $or: [{ city: 'Oslo' }, { tags: 'z' }] }, ['a']],
        ['$regex with options', { handle: { $regex: '^d', $options: 'i' } }, ['d']],
        ['$regex with a RegExp', { handle: { $regex: /an$/ } }, ['d']],
        ['a RegExp value', { handle: /^[a-c]/ }, ['a', 'b', 'c']],
        ['an array element by equality', { tags: 'y' }, ['a', 'b']],
        ['array elements by $in', { tags: { $in: ['z', 'x'] } }, ['a', 'd', 'e']],
        ['a whole array by equality', { tags: ['x', 'y'] }, ['a']],
        ['an empty array by equality', { tags: [] }, ['c']],
        ['a field of subdocuments in an array', { 'items.sku': 'k2' }, ['d', 'e']],
        ['a range on subdocuments in an array', { 'items.qty': { $gt: 4 } }, ['d']],
        ['a subdocument by equality', { profile: { score: 30, lang: 'en' } }, ['b']],
      ];
      for (const [title, filter, expected] of cases) {
        it(`matches ${title}`, async () => {
          const c = await seeded();
          expect(ids(await c.find(filter))).toEqual(expected);
          expect(await c.countDocuments(filter)).toBe(expected.length);
        });
      }
    });

    describe('sort, skip, limit, projection', () => {
      it('sorts ascending and descending on one field', async () => {
        const c = await seeded();
        expect(inOrder(await c.find({}, { sort: { handle: 1 } }))).toEqual(['d', 'a', 'b', 'c', 'e']);
        expect(inOrder(await c.find({}, { sort: { handle: -1 } }))).toEqual(['e', 'c', 'b', 'a', 'd']);
        expect(inOrder(await c.find({}, { sort: { joined: -1, _id: 1 } }))).toEqual(['c', 'b', 'a', 'd', 'e']);
      });

      it('sorts on several fields with mixed directions', async () => {
        const c = await seeded();
        expect(inOrder(await c.find({}, { sort: { age: 1, handle: 1 } }))).toEqual(['e', 'b', 'a', 'c', 'd']);
        expect(inOrder(await c.find({}, { sort: { age: -1, handle: 1 } }))).toEqual(['d', 'a', 'c', 'b', 'e']);
        expect(inOrder(await c.find({}, { sort: { age: -1, handle: -1 } }))).toEqual(['d', 'c', 'a', 'b', 'e']);
      });

      it('sorts missing and null first ascending, last descending', async () => {
        const c = await seeded();
        expect(inOrder(await c.find({}, { sort: { city: 1, _id: 1 } }))).toEqual(['d', 'e', 'b', 'c', 'a']);
        expect(inOrder(await c.find({}, { sort: { city: -1, _id: 1 } }))).toEqual(['a', 'b', 'c', 'd', 'e']);
        expect(inOrder(await c.find({}, { sort: { 'profile.score': -1, _id: 1 } }))).toEqual(['b', 'c', 'a', 'd', 'e']);
      });

      it('sorts on array fields by the least element ascending and the greatest descending', async () => {
        const c = empty();
        await c.insertOne({ _id: 'p', n: [5, 1] });
        await c.insertOne({ _id: 'q', n: [3] });
        await c.insertOne({ _id: 'r', n: [2, 9] });
        expect(inOrder(await c.find({}, { sort: { n: 1 } }))).toEqual(['p', 'r', 'q']);
        expect(inOrder(await c.find({}, { sort: { n: -1 } }))).toEqual(['r', 'p', 'q']);
      });

      it('filters, then sorts, then skips, then limits', async () => {
        const c = await seeded();
        const sort = { age: 1, handle: 1 } as const;
        expect(inOrder(await c.find({}, { sort, limit: 2 }))).toEqual(['e', 'b']);
        expect(inOrder(await c.find({}, { sort, skip: 1, limit: 2 }))).toEqual(['b', 'a']);
        expect(inOrder(await c.find({}, { sort, skip: 4 }))).toEqual(['d']);
        expect(await c.find({}, { sort, skip: 10 })).toEqual([]);
        expect(inOrder(await c.find({ age: { $gte: 25 } }, { sort: { age: -1, handle: 1 }, skip: 1, limit: 2 }))).toEqual(['a', 'c']);
        expect(await c.find({}, { limit: 2 })).toHaveLength(2);
        expect(await c.find({}, { limit: 0 })).toHaveLength(5);
      });

      it('findOne takes the first in sort order', async () => {
        const c = await seeded();
        expect((await c.findOne({}, { sort: { age: -1 } }))?._id).toBe('d');
        expect((await c.findOne({ city: 'Bergen' }, { sort: { 'profile.score': 1 } }))?._id).toBe('c');
      });

      it('projects the included fields and _id', async () => {
        const c = await seeded();
        expect(await c.findOne({ _id: 'a' }, { projection: { handle: 1, age: 1 } })).toEqual({ _id: 'a', handle: 'ann', age: 31 });
        expect(await c.findOne({ _id: 'a' }, { projection: { 'profile.score': 1 } })).toEqual({ _id: 'a', profile: { score: 10 } });
        expect(await c.findOne({ _id: 'd' }, { projection: { 'items.sku': 1 } })).toEqual({ _id: 'd', items: [{ sku: 'k1' }, { sku: 'k2' }] });
        expect(await c.findOne({ _id: 'd' }, { projection: { city: 1 } })).toEqual({ _id: 'd' });
        const listed = await c.find({ city: 'Bergen' }, { projection: { handle: 1 }, sort: { handle: 1 } });
        expect(listed).toEqual([
          { _id: 'b', handle: 'bob' },
          { _id: 'c', handle: 'cat' },
        ]);
      });
    });

    describe('update operators', () => {
      it('$set replaces and creates fields, also on dotted paths', async () => {
        const c = await seeded();
        const result = await c.updateOne({ _id: 'a' }, { $set: { city: 'Tromsø', 'profile.lang': 'de', 'settings.theme': 'dark' } });
        expect(result).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
        expect(await c.findOne({ _id: 'a' }, { projection: { city: 1, profile: 1, settings: 1 } })).toEqual({
          _id: 'a',
          city: 'Tromsø',
          profile: { score: 10, lang: 'de' },
          settings: { theme: 'dark' },
        });
      });

      it('reports a match without a modification when nothing changes, and neither without a match', async () => {
        const c = await seeded();
        expect(await c.updateOne({ _id: 'a' }, { $set: { city: 'Oslo' } })).toEqual({ matchedCount: 1, modifiedCount: 0, upsertedId: null });
        expect(await c.updateOne({ _id: 'zz' }, { $set: { city: 'Oslo' } })).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: null });
        expect(await c.countDocuments()).toBe(5);
      });

      it('$unset removes fields', async () => {
        const c = await seeded();
        await c.updateOne({ _id: 'a' }, { $unset: { city: '', 'profile.lang': '' } });
        const a = (await c.findOne({ _id: 'a' }))!;
        expect('city' in a).toBe(false);
        expect(a.profile).toEqual({ score: 10 });
        expect(await c.countDocuments({ city: { $exists: false } })).toBe(2);
      });

      it('$inc adds to numbers and creates missing fields', async () => {
        const c = await seeded();
        await c.updateOne({ _id: 'a' }, { $inc: { age: 2, 'stats.views': 3, 'profile.score': -4 } });
        await c.updateOne({ _id: 'a' }, { $inc: { 'stats.views': 1 } });
        expect(await c.findOne({ _id: 'a' }, { projection: { age: 1, stats: 1, profile: 1 } })).toEqual({
          _id: 'a',
          age: 33,
          stats: { views: 4 },
          profile: { score: 6, lang: 'no' },
        });
      });

      it('$push appends, creating the array', async () => {
        const c = await seeded();
        await c.updateOne({ _id: 'a' }, { $push: { tags: 'w', log: { at: 1 } } });
        await c.updateOne({ _id: 'a' }, { $push: { tags: 'w' } });
        expect(await c.findOne({ _id: 'a' }, { projection: { tags: 1, log: 1 } })).toEqual({ _id: 'a', tags: ['x', 'y', 'w', 'w'], log: [{ at: 1 }] });
      });

      it('$pull removes values and subdocuments matching a condition', async () => {
        const c = await seeded();
        await c.updateOne({ _id: 'a' }, { $pull: { tags: 'x' } });
        await c.updateOne({ _id: 'd' }, { $pull: { items: { qty: { $lt: 3 } } } });
        expect((await c.findOne({ _id: 'a' }))?.tags).toEqual(['y']);
        expect((await c.findOne({ _id: 'd' }))?.items).toEqual([{ sku: 'k2', qty: 5 }]);
        expect(await c.updateOne({ _id: 'a' }, { $pull: { tags: 'absent' } })).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
      });

      it('$addToSet adds only values not yet there', async () => {
        const c = await seeded();
        expect(await c.updateOne({ _id: 'a' }, { $addToSet: { tags: 'y' } })).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
        await c.updateOne({ _id: 'a' }, { $addToSet: { tags: 'q' } });
        await c.updateOne({ _id: 'a' }, { $addToSet: { tags: 'q' } });
        await c.updateOne({ _id: 'a' }, { $addToSet: { followers: 'b' } });
        await c.updateOne({ _id: 'a' }, { $addToSet: { tags: { $each: ['x', 'n', 'n'] } } });
        expect(await c.findOne({ _id: 'a' }, { projection: { tags: 1, followers: 1 } })).toEqual({ _id: 'a', tags: ['x', 'y', 'q', 'n'], followers: ['b'] });
      });

      it('$max and $min keep the greater or lesser value and create missing fields', async () => {
        const c = await seeded();
        expect(await c.updateOne({ _id: 'a' }, { $max: { age: 20 } })).toMatchObject({ modifiedCount: 0 });
        await c.updateOne({ _id: 'a' }, { $max: { age: 50, best: 7 } });
        await c.updateOne({ _id: 'b' }, { $min: { age: 10, 'profile.score': 99, worst: 3 } });
        expect(await c.findOne({ _id: 'a' }, { projection: { age: 1, best: 1 } })).toEqual({ _id: 'a', age: 50, best: 7 });
        expect(await c.findOne({ _id: 'b' }, { projection: { age: 1, profile: 1, worst: 1 } })).toEqual({
          _id: 'b',
          age: 10,
          profile: { score: 30, lang: 'en' },
          worst: 3,
        });
        await c.updateOne({ _id: 'a' }, { $max: { joined: MAY } });
        expect((await c.findOne({ _id: 'a' }))?.joined).toEqual(MAY);
      });

      it('applies several operators in one update', async () => {
        const c = await seeded();
        await c.updateOne({ handle: 'bob' }, { $set: { city: 'Oslo' }, $inc: { age: 1 }, $push: { tags: 'z' }, $unset: { profile: '' } });
        expect(await c.findOne({ _id: 'b' }, { projection: { city: 1, age: 1, tags: 1, profile: 1 } })).toEqual({
          _id: 'b',
          city: 'Oslo',
          age: 26,
          tags: ['y', 'z'],
        });
      });

      it('updateOne changes one matching document, updateMany all of them', async () => {
        const c = await seeded();
        expect(await c.updateOne({ city: 'Bergen' }, { $set: { seen: true } })).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
        expect(await c.countDocuments({ seen: true })).toBe(1);
        expect(await c.updateMany({ age: 31 }, { $set: { city: 'Bergen' } })).toEqual({ matchedCount: 2, modifiedCount: 1, upsertedId: null });
        expect(ids(await c.find({ city: 'Bergen' }))).toEqual(['a', 'b', 'c']);
        expect(await c.updateMany({}, { $inc: { age: 1 } })).toEqual({ matchedCount: 5, modifiedCount: 5, upsertedId: null });
        expect(await c.updateMany({ handle: 'nobody' }, { $inc: { age: 1 } })).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: null });
      });

      it('$setOnInsert is ignored when the document exists', async () => {
        const c = await seeded();
        const result = await c.updateOne({ _id: 'a' }, { $set: { seen: true }, $setOnInsert: { created: true } }, { upsert: true });
        expect(result).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
        const a = (await c.findOne({ _id: 'a' }))!;
        expect(a.seen).toBe(true);
        expect('created' in a).toBe(false);
      });
    });

    describe('upsert', () => {
      it('inserts from the filter equality fields, then $setOnInsert, $set and the other operators', async () => {
        const c = await seeded();
        const result = await c.updateOne(
          { handle: 'zed', 'profile.lang': 'fi', kind: { $eq: 'bot' }, age: { $gt: 3 } },
          { $set: { age: 7 }, $setOnInsert: { via: 'upsert' }, $inc: { visits: 1 }, $addToSet: { tags: 'new' } },
          { upsert: true },
        );
        expect(result.matchedCount).toBe(0);
        expect(result.modifiedCount).toBe(0);
        expect(typeof result.upsertedId).toBe('string');
        expect(result.upsertedId).not.toBe('');
        expect(await c.findOne({ _id: result.upsertedId! })).toEqual({
          _id: result.upsertedId,
          handle: 'zed',
          profile: { lang: 'fi' },
          kind: 'bot',
          age: 7,
          via: 'upsert',
          visits: 1,
          tags: ['new'],
        });
        expect(await c.countDocuments()).toBe(6);
      });

      it('uses the _id of the filter, and matches the upserted document next time', async () => {
        const c = empty();
        expect(await c.updateOne({ _id: 'u1' }, { $inc: { n: 1 }, $setOnInsert: { first: true } }, { upsert: true })).toEqual({
          matchedCount: 0,
          modifiedCount: 0,
          upsertedId: 'u1',
        });
        expect(await c.updateOne({ _id: 'u1' }, { $inc: { n: 1 }, $setOnInsert: { first: false } }, { upsert: true })).toEqual({
          matchedCount: 1,
          modifiedCount: 1,
          upsertedId: null,
        });
        expect(await c.find({})).toEqual([{ _id: 'u1', n: 2, first: true }]);
      });

      it('without upsert, inserts nothing', async () => {
        const c = empty();
        await c.updateOne({ _id: 'u1' }, { $set: { n: 1 } });
        expect(await c.countDocuments()).toBe(0);
      });
    });

    describe('replaceOne', () => {
      it('replaces the whole document and keeps its _id', async () => {
        const c = await seeded();
        expect(await c.replaceOne({ handle: 'ann' }, { _id: 'a', handle: 'anne' })).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
        expect(await c.findOne({ _id: 'a' })).toEqual({ _id: 'a', handle: 'anne' });
        expect(await c.replaceOne({ _id: 'a' }, { _id: 'a', handle: 'anne' })).toEqual({ matchedCount: 1, modifiedCount: 0, upsertedId: null });
      });

      it('inserts with upsert when nothing matches, and not without', async () => {
        const c = empty();
        expect(await c.replaceOne({ _id: 'r1' }, { _id: 'r1', v: 1 })).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: null });
        expect(await c.countDocuments()).toBe(0);
        expect(await c.replaceOne({ _id: 'r1' }, { _id: 'r1', v: 1 }, { upsert: true })).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: 'r1' });
        expect(await c.replaceOne({ _id: 'r1' }, { _id: 'r1', v: 2 }, { upsert: true })).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
        expect(await c.find({})).toEqual([{ _id: 'r1', v: 2 }]);
      });
    });

    describe('delete', () => {
      it('deleteOne removes one matching document', async () => {
        const c = await seeded();
        expect(await c.deleteOne({ city: 'Bergen' })).toBe(1);
        expect(await c.countDocuments({ city: 'Bergen' })).toBe(1);
        expect(await c.deleteOne({ handle: 'nobody' })).toBe(0);
        expect(await c.countDocuments()).toBe(4);
      });

      it('deleteMany removes every matching document, or all without a filter', async () => {
        const c = await seeded();
        expect(await c.deleteMany({ tags: 'x' })).toBe(2);
        expect(ids(await c.find({}))).toEqual(['b', 'c', 'd']);
        expect(await c.deleteMany({ handle: 'nobody' })).toBe(0);
        expect(await c.deleteMany()).toBe(3);
        expect(await c.countDocuments()).toBe(0);
      });

      it('a deleted _id can be inserted again', async () => {
        const c = await seeded();
        await c.deleteOne({ _id: 'a' });
        await c.insertOne({ _id: 'a', handle: 'again' });
        expect((await c.findOne({ _id: 'a' }))?.handle).toBe('again');
      });
    });

    describe('indexes', () => {
      async function withUniqueHandles(): Promise<Collection> {
        const c = await seeded();
        await c.createIndex({ handle: 1 }, { unique: true });
        return c;
      }
      const expectDuplicate = async (write: Promise<unknown>, collection: string): Promise<void> => {
        const error = await write.then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(error).toMatchObject({ code: 11000, collection });
      };

      it('creating the same index twice is a no-op', async () => {
        const c = await withUniqueHandles();
        await c.createIndex({ handle: 1 }, { unique: true });
        await c.createIndex({ city: 1, age: -1 });
        await c.createIndex({ city: 1, age: -1 });
        expect(await c.countDocuments()).toBe(5);
        await expectDuplicate(c.insertOne({ _id: 'x', handle: 'ann' }), c.name);
      });

      it('a unique index rejects an insert that repeats a value and leaves the data unchanged', async () => {
        const c = await withUniqueHandles();
        await expectDuplicate(c.insertOne({ _id: 'x', handle: 'ann' }), c.name);
        expect(await c.countDocuments()).toBe(5);
        expect(await c.findOne({ _id: 'x' })).toBeNull();
        expect(await c.findOne({ handle: 'ann' })).toEqual(people()[0]);
      });

      it('a unique index rejects an update that repeats a value and leaves the document unchanged', async () => {
        const c = await withUniqueHandles();
        await expectDuplicate(c.updateOne({ _id: 'b' }, { $set: { handle: 'ann', age: 99 } }), c.name);
        await expectDuplicate(c.replaceOne({ _id: 'b' }, { _id: 'b', handle: 'ann' }), c.name);
        expect(await c.findOne({ _id: 'b' })).toEqual(people()[1]);
        expect(await c.find({ handle: 'ann' })).toEqual([people()[0]]);
      });

      it('a unique index rejects an upsert that repeats a value and inserts nothing', async () => {
        const c = await withUniqueHandles();
        await expectDuplicate(c.updateOne({ _id: 'new' }, { $set: { handle: 'ann' } }, { upsert: true }), c.name);
        await expectDuplicate(c.updateOne({ handle: 'ann', age: 1 }, { $set: { x: 1 } }, { upsert: true }), c.name);
        await expectDuplicate(c.replaceOne({ _id: 'new' }, { _id: 'new', handle: 'bob' }, { upsert: true }), c.name);
        expect(await c.countDocuments()).toBe(5);
        expect(await c.findOne({ _id: 'new' })).toBeNull();
      });

      it('a value is free again once its holder changed it or was deleted', async () => {
        const c = await withUniqueHandles();
        await c.updateOne({ _id: 'a' }, { $set: { handle: 'annie' } });
        await c.insertOne({ _id: 'x', handle: 'ann' });
        await c.deleteOne({ _id: 'b' });
        await c.updateOne({ _id: 'c' }, { $set: { handle: 'bob' } });
        expect(ids(await c.find({ handle: { $in: ['ann', 'annie', 'bob'] } }))).toEqual(['a', 'c', 'x']);
      });

      it('a document may keep its own unique value when updated', async () => {
        const c = await withUniqueHandles();
        expect(await c.updateOne({ _id: 'a' }, { $set: { handle: 'ann', age: 32 } })).toMatchObject({ modifiedCount: 1 });
        expect(await c.replaceOne({ _id: 'a' }, { _id: 'a', handle: 'ann' })).toMatchObject({ modifiedCount: 1 });
      });

      it('a compound unique index rejects only the same combination', async () => {
        const c = empty('votes');
        await c.createIndex({ castieId: 1, userId: 1 }, { unique: true });
        await c.insertOne({ _id: '1', castieId: 'c1', userId: 'u1' });
        await c.insertOne({ _id: '2', castieId: 'c1', userId: 'u2' });
        await c.insertOne({ _id: '3', castieId: 'c2', userId: 'u1' });
        await expectDuplicate(c.insertOne({ _id: '4', castieId: 'c1', userId: 'u1' }), c.name);
        expect(await c.countDocuments()).toBe(3);
      });

      it('a unique index treats a missing field as null, as MongoDB does', async () => {
        const c = empty();
        await c.createIndex({ email: 1 }, { unique: true });
        await c.insertOne({ _id: '1' });
        await expectDuplicate(c.insertOne({ _id: '2' }), c.name);
        await expectDuplicate(c.insertOne({ _id: '3', email: null }), c.name);
        await c.insertOne({ _id: '4', email: 'a@x.test' });
        expect(await c.countDocuments()).toBe(2);
      });

      it('a unique index on an array field rejects values held by another document', async () => {
        const c = empty();
        await c.createIndex({ aliases: 1 }, { unique: true });
        await c.insertOne({ _id: '1', aliases: ['a', 'b'] });
        await c.insertOne({ _id: '2', aliases: ['c'] });
        await expectDuplicate(c.updateOne({ _id: '2' }, { $push: { aliases: 'b' } }), c.name);
        await c.updateOne({ _id: '1' }, { $addToSet: { aliases: 'd' } });
        expect(ids(await c.find({ aliases: { $in: ['b', 'd'] } }))).toEqual(['1']);
      });

      it('creating a unique index over repeated values fails', async () => {
        const c = await seeded();
        await expectDuplicate(c.createIndex({ age: 1 }, { unique: true }), c.name);
        await c.insertOne({ _id: 'f', age: 31 });
        expect(await c.countDocuments({ age: 31 })).toBe(3);
      });

      it('indexed queries answer exactly as unindexed ones, before and after writes', async () => {
        const plain = empty('plain');
        const indexed = empty('indexed');
        await indexed.createIndex({ group: 1 });
        await indexed.createIndex({ tags: 1 });
        await indexed.createIndex({ 'meta.kind': 1, n: -1 });
        await indexed.createIndex({ ref: 1 }, { unique: true });
        for (let i = 0; i < 240; i++) {
          const doc: Doc = { _id: `d${String(i).padStart(3, '0')}`, n: (i * 37) % 101, ref: `r${i}`, tags: [`t${i % 4}`, `t${i % 7}`] };
          if (i % 11 !== 0) doc.group = i % 13 === 0 ? null : `g${i % 6}`;
          if (i % 3 === 0) doc.meta = { kind: i % 2 === 0 ? 'even' : 'odd' };
          if (i % 17 === 0) doc.meta = i % 2 === 0 ? [] : [{ kind: 'odd' }, { other: 1 }];
          if (i % 5 === 0) doc.n = String(doc.n);
          await plain.insertOne(doc);
          await indexed.insertOne(doc);
        }
        const queries: Filter[] = [
          { group: 'g1' },
          { group: { $eq: 'g2' } },
          { group: { $in: ['g3', 'g4', 'nope'] } },
          { group: null },
          { group: { $in: [null, 'g0'] } },
          { group: 'g1', n: { $gt: 50 } },
          { group: { $in: ['g1', 'g5'] }, tags: 't3' },
          { tags: 't6' },
          { tags: { $in: ['t1', 't5'] } },
          { 'meta.kind': 'odd' },
          { 'meta.kind': null },
          { 'meta.kind': { $in: ['even', null] } },
          { group: { $in: [] } },
          { $or: [{ group: 'g2' }, { tags: 't0' }] },
          { $and: [{ group: 'g2' }, { 'meta.kind': 'even' }] },
          { $or: [{ group: 'g2' }, { n: { $lt: 10 } }] },
          { group: { $in: ['g1'], $ne: 'g1' } },
          { _id: { $in: ['d001', 'd002', 'x'] }, group: 'g1' },
          { ref: 'r17' },
          { n: 5 },
          { n: '5' },
        ];
        const compare = async (): Promise<void> => {
          for (const filter of queries) {
            expect(ids(await indexed.find(filter)), JSON.stringify(filter)).toEqual(ids(await plain.find(filter)));
            const options = { sort: { n: -1, _id: 1 } as const, skip: 2, limit: 5 };
            expect(inOrder(await indexed.find(filter, options))).toEqual(inOrder(await plain.find(filter, options)));
            expect(await indexed.countDocuments(filter)).toBe(await plain.countDocuments(filter));
          }
        };
        await compare();
        for (const c of [plain, indexed]) {
          await c.updateMany({ group: 'g1' }, { $set: { group: 'g2' }, $push: { tags: 't6' } });
          await c.updateOne({ _id: 'd004' }, { $unset: { group: '' } });
          await c.updateOne({ _id: 'd005' }, { $set: { 'meta.kind': 'odd', ref: 'moved' } });
          await c.deleteMany({ group: 'g3' });
          await c.replaceOne({ _id: 'd010' }, { _id: 'd010', group: 'g4', ref: 'r10', tags: [] });
          await c.updateOne({ _id: 'up1', group: 'g9' }, { $set: { tags: ['t6'], n: 1, ref: 'up1' } }, { upsert: true });
        }
        await compare();
      });
    });

    it('dropAll empties every collection, and the collections stay usable', async () => {
      const crowd = await seeded();
      const other = empty('other');
      await other.insertOne({ _id: 'o' });
      await crowd.createIndex({ handle: 1 }, { unique: true });
      await store.dropAll();
      expect(await crowd.countDocuments()).toBe(0);
      expect(await other.find({})).toEqual([]);
      expect(await store.collection(other.name).countDocuments()).toBe(0);
      await crowd.insertOne({ _id: 'a', handle: 'ann' });
      expect(await crowd.find({ handle: 'ann' })).toEqual([{ _id: 'a', handle: 'ann' }]);
    });
  });
}
