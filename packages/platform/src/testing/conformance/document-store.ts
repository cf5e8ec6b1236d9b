import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkedOnce, collectionSpec, DuplicateKeyError, instantKey, keysetPage, type Collection, type CollectionSpec, type Doc, type DocumentStore, type Filter, type UnitOfWork } from '../../index.ts';

/** Collection names unique per test, so adapters on a shared server need no clean-up between tests. */
const unique = (prefix: string): string => `${prefix}_${randomUUID().slice(0, 8)}`;

const ids = (docs: readonly Doc[]): string[] => docs.map((d) => d._id).sort();
const inOrder = (docs: readonly Doc[]): string[] => docs.map((d) => d._id);

const JAN = '2024-01-01T00:00:00.000Z';
const MAR = '2024-03-01T00:00:00.000Z';
const MAY = '2024-05-01T00:00:00.000Z';

interface Person extends Doc {
  handle: string;
  age: number;
  city?: string | null;
  tags: string[];
  profile?: { score: number; lang: string };
  joined?: string;
  seen?: boolean;
  visits?: number;
  stats?: { views: number };
  settings?: { theme: string };
  followers?: string[];
  log?: { at: number }[];
  counts?: Record<string, number>;
  best?: number;
  worst?: number;
  via?: string;
  kind?: string;
  created?: boolean;
  first?: boolean;
}

/** Five people covering missing and null fields, arrays, objects and ISO dates. */
const people = (): Person[] => [
  { _id: 'a', handle: 'ann', age: 31, city: 'Oslo', tags: ['x', 'y'], profile: { score: 10, lang: 'no' }, joined: JAN },
  { _id: 'b', handle: 'bob', age: 25, city: 'Bergen', tags: ['y'], profile: { score: 30, lang: 'en' }, joined: MAR },
  { _id: 'c', handle: 'cat', age: 31, city: 'Bergen', tags: [], profile: { score: 20, lang: 'no' }, joined: MAY },
  { _id: 'd', handle: 'Dan', age: 40, tags: ['z'] },
  { _id: 'e', handle: 'eve', age: 19, city: null, tags: ['x'] },
];

const personSpec = (name: string, indexes: CollectionSpec<Person>['indexes'] = []): CollectionSpec<Person> =>
  collectionSpec<Person>({ name, arrays: ['tags', 'followers', 'log'], indexes });

/**
 * The contract every document store adapter fulfils (SQLite, MongoDB): the subset of MongoDB the
 * port describes. `makeStore` gives a store per test; collection names are unique per test.
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

    /** The specs of the collections a test opened: a unit of work opens the same ones (inUnit). */
    const specs = new WeakMap<object, CollectionSpec<Doc>>();
    const opened = <T extends Doc>(spec: CollectionSpec<T>): Collection<T> => {
      const c = store.collection(spec);
      specs.set(c, spec as unknown as CollectionSpec<Doc>);
      return c;
    };
    /** A collection the test opened, as the unit of work sees it. */
    const inUnit = <T extends Doc>(unit: UnitOfWork, c: Collection<T>): Collection<T> => unit.collection(specs.get(c) as unknown as CollectionSpec<T>);
    const empty = (prefix = 'docs', indexes: CollectionSpec<Person>['indexes'] = []): Collection<Person> => opened(personSpec(unique(prefix), indexes));
    async function seeded(indexes: CollectionSpec<Person>['indexes'] = []): Promise<Collection<Person>> {
      const c = empty('people', indexes);
      for (const doc of people()) await c.insertOne(doc);
      return c;
    }

    describe('insert and read', () => {
      it('finds an inserted document by _id, as it was inserted', async () => {
        const c = await seeded();
        expect(c.name).toMatch(/^people_/);
        expect(await c.findOne({ _id: 'a' })).toEqual(people()[0]);
        expect(await c.findOne({ _id: 'nobody' })).toBeNull();
        expect(ids(await c.find({}))).toEqual(['a', 'b', 'c', 'd', 'e']);
      });

      it('rejects a second document with the same _id and keeps the first', async () => {
        const c = await seeded();
        const error = await c.insertOne({ _id: 'a', handle: 'impostor', age: 1, tags: [] }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(error).toMatchObject({ code: 11000 });
        expect(await c.findOne({ _id: 'a' })).toEqual(people()[0]);
        expect(await c.countDocuments()).toBe(5);
      });

      it('keeps what it stores: changing an inserted document or one read (where allowed) changes nothing stored', async () => {
        const c = empty();
        const input: Person = { _id: 'x', handle: 'x', age: 1, tags: ['t'], profile: { score: 1, lang: 'no' } };
        await c.insertOne(input);
        input.profile!.score = 99;
        input.tags.push('changed');
        // Documents read are values: an adapter may hand out copies (MongoDB) or share frozen
        // ones (SQLite's cache); either way the stored document stays as it was.
        const attempt = (change: () => void) => {
          try {
            change();
          } catch (error) {
            expect(error).toBeInstanceOf(TypeError);
          }
        };
        const found = (await c.findOne({ _id: 'x' }))!;
        attempt(() => (found.profile!.score = 42));
        attempt(() => found.tags.push('42'));
        const [listed] = await c.find({ _id: { $in: ['x'] } });
        attempt(() => (listed!.profile!.score = 43));
        const [ranged] = await c.find({ age: { $gte: 1 } });
        attempt(() => (ranged!.handle = 'changed'));
        const pushed = { at: 1 };
        await c.updateOne({ _id: 'x' }, { $push: { log: pushed }, $set: { settings: { theme: 't' } } });
        pushed.at = 2;
        expect(await c.findOne({ _id: 'x' })).toEqual({ _id: 'x', handle: 'x', age: 1, tags: ['t'], profile: { score: 1, lang: 'no' }, log: [{ at: 1 }], settings: { theme: 't' } });
      });

      it('finds documents by a list of ids, with an equality on another field, whatever was read before', async () => {
        const c = await seeded();
        expect(ids(await c.find({ _id: { $in: ['a'] } }))).toEqual(['a']);
        expect(ids(await c.find({ _id: { $in: ['c', 'a', 'nobody', 'e', 'a'] } }))).toEqual(['a', 'c', 'e']);
        // Again, now that the documents were read once (a store may keep them): still once each, in id order.
        expect(ids(await c.find({ _id: { $in: ['e', 'a', 'nobody', 'a', 'c', 'e'] } }))).toEqual(['a', 'c', 'e']);
        expect(ids(await c.find({ _id: { $in: ['a', 'b', 'c', 'd'] }, age: 31 }))).toEqual(['a', 'c']);
        expect(ids(await c.find({ _id: { $in: ['a', 'b', 'e'] }, city: null }))).toEqual(['e']);
        expect(ids(await c.find({ _id: { $in: ['a', 'b', 'c'] }, tags: 'y' }))).toEqual(['a', 'b']);
        expect(await c.find({ _id: { $in: ['a', 'b'] } }, { projection: { handle: 1 } })).toEqual(expect.arrayContaining([{ _id: 'a', handle: 'ann' }, { _id: 'b', handle: 'bob' }]));
        expect(await c.find({ _id: { $in: [] } })).toEqual([]);
      });

      it('looks documents up by ids (repeated and unknown ones among them), and sees a unit of work its own writes', async () => {
        const c = await seeded();
        const keys = (found: Map<string, Person>) => [...found.keys()].sort();
        expect(keys(await c.byIds(['c', 'a', 'nobody', 'e', 'a']))).toEqual(['a', 'c', 'e']);
        // Again, now that the documents were read once (a store may keep them, and that nobody is not there).
        const again = await c.byIds(['e', 'a', 'nobody', 'a']);
        expect(keys(again)).toEqual(['a', 'e']);
        expect(again.get('a')).toEqual(people()[0]);
        expect((await c.byIds([])).size).toBe(0);
        const inside = await store.transaction(async (tx) => {
          const u = inUnit(tx, c);
          await u.insertOne({ _id: 'nobody', handle: 'new', age: 2, tags: [] });
          await u.deleteOne({ _id: 'a' });
          await u.updateOne({ _id: 'c' }, { $set: { age: 32 } });
          return u.byIds(['a', 'nobody', 'c']);
        });
        expect(keys(inside)).toEqual(['c', 'nobody']);
        expect(inside.get('c')?.age).toBe(32);
        const after = await c.byIds(['a', 'nobody', 'c']);
        expect(keys(after)).toEqual(['c', 'nobody']);
        expect(after.get('c')?.age).toBe(32);
      });

      it('counts documents, all or matching a filter', async () => {
        const c = await seeded();
        expect(await c.countDocuments()).toBe(5);
        expect(await c.countDocuments({})).toBe(5);
        expect(await c.countDocuments({ age: 31 })).toBe(2);
        expect(await c.countDocuments({ handle: 'nobody' })).toBe(0);
        expect(await empty().countDocuments()).toBe(0);
      });

      it('counts matching documents per value of a text field, null and missing together under null', async () => {
        const c = await seeded();
        // Maps compare by their entries, in any order. Eve's null city and Dan's missing one both count under null.
        expect(await c.countBy({}, 'city')).toEqual(new Map([['Bergen', 2], ['Oslo', 1], [null, 2]]));
        expect(await c.countBy({ age: 31 }, 'city')).toEqual(new Map([['Bergen', 1], ['Oslo', 1]]));
        expect(await c.countBy({ age: { $gte: 25 }, tags: 'y' }, 'city')).toEqual(new Map([['Bergen', 1], ['Oslo', 1]]));
        expect(await c.countBy({ _id: { $in: ['a', 'b', 'c'] } }, 'profile.lang')).toEqual(new Map([['en', 1], ['no', 2]]));
        expect(await c.countBy({ handle: 'nobody' }, 'city')).toEqual(new Map());
        expect(await empty().countBy({}, 'city')).toEqual(new Map());
        // Indexed the way a count per value is asked (the filter's field, then the counted one): the same answers.
        const indexed = await seeded([{ keys: { age: 1, city: 1 } }]);
        expect(await indexed.countBy({ age: { $in: [31, 40] } }, 'city')).toEqual(new Map([['Bergen', 1], ['Oslo', 1], [null, 1]]));
      });
    });

    const filterCases: Array<[string, Filter<Person>, string[]]> = [
      ['equality', { city: 'Bergen' }, ['b', 'c']],
      ['equality on a dotted path', { 'profile.lang': 'no' }, ['a', 'c']],
      ['equality on an ISO date', { joined: MAR }, ['b']],
      ['several fields at once', { city: 'Bergen', age: 31 }, ['c']],
      ['$eq', { age: { $eq: 31 } }, ['a', 'c']],
      ['$ne, which matches missing fields too', { city: { $ne: 'Bergen' } }, ['a', 'd', 'e']],
      ['$ne null: present and not null', { city: { $ne: null } }, ['a', 'b', 'c']],
      ['$gt', { age: { $gt: 25 } }, ['a', 'c', 'd']],
      ['$gte', { age: { $gte: 25 } }, ['a', 'b', 'c', 'd']],
      ['$lt', { age: { $lt: 25 } }, ['e']],
      ['$lte', { age: { $lte: 25 } }, ['b', 'e']],
      ['a range', { age: { $gt: 19, $lt: 40 } }, ['a', 'b', 'c']],
      ['$gt on strings (binary order)', { handle: { $gt: 'bob' } }, ['c', 'e']],
      ['a range of ISO dates', { joined: { $gte: '2024-02-01T00:00:00.000Z', $lt: MAY } }, ['b']],
      ['a range on a dotted path', { 'profile.score': { $gte: 20 } }, ['b', 'c']],
      ['$in', { city: { $in: ['Oslo', 'Bergen'] } }, ['a', 'b', 'c']],
      ['$in with null, which matches missing fields', { city: { $in: ['Oslo', null] } }, ['a', 'd', 'e']],
      ['$in with nothing', { city: { $in: [] } }, []],
      ['$nin, which matches missing fields', { city: { $nin: ['Oslo', 'Bergen'] } }, ['d', 'e']],
      ['$nin with null', { city: { $nin: ['Oslo', null] } }, ['b', 'c']],
      ['$exists: true, which counts null as present', { city: { $exists: true } }, ['a', 'b', 'c', 'e']],
      ['$exists: false', { city: { $exists: false } }, ['d']],
      ['null, which matches missing fields', { city: null }, ['d', 'e']],
      ['$and', { $and: [{ age: { $gte: 25 } }, { tags: 'y' }] }, ['a', 'b']],
      ['$or', { $or: [{ city: 'Oslo' }, { age: { $lt: 20 } }] }, ['a', 'e']],
      ['$or next to a field', { age: 31, $or: [{ city: 'Oslo' }, { tags: 'z' }] }, ['a']],
      ['$regex with options', { handle: { $regex: '^d', $options: 'i' } }, ['d']],
      ['$regex with a RegExp', { handle: { $regex: /an$/ } }, ['d']],
      ['an array element by equality', { tags: 'y' }, ['a', 'b']],
      ['array elements by $in', { tags: { $in: ['z', 'x'] } }, ['a', 'd', 'e']],
      ['array elements by $nin', { tags: { $nin: ['x', 'z'] } }, ['b', 'c']],
      ['an array without an element by $ne', { tags: { $ne: 'x' } }, ['b', 'c', 'd']],
      ['an object by equality (keys in order)', { profile: { score: 30, lang: 'en' } }, ['b']],
      ['_id by $in', { _id: { $in: ['a', 'c', 'nope'] } }, ['a', 'c']],
    ];

    describe('filters', () => {
      for (const [title, filter, expected] of filterCases) {
        it(`matches ${title}`, async () => {
          const c = await seeded();
          expect(ids(await c.find(filter))).toEqual(expected);
          expect(await c.countDocuments(filter)).toBe(expected.length);
        });
      }

      it('answers every filter by itself, however many were asked before on the same collection (a store may keep answers)', async () => {
        const c = await seeded();
        const cases: [string, Filter<Person>, string[]][] = [
          ...filterCases,
          ['another RegExp', { handle: { $regex: /^b/ } }, ['b']],
          ['a third RegExp, with a flag', { handle: { $regex: /^D/i } }, ['d']],
        ];
        for (let round = 0; round < 2; round++) {
          for (const [title, filter, expected] of cases) {
            expect(ids(await c.find(filter)), `${title}, round ${round}`).toEqual(expected);
            const byAge = (await c.find(filter, { sort: { age: 1, _id: 1 } })).map((d) => d._id);
            expect((await c.find(filter, { sort: { age: 1, _id: 1 }, limit: 2 })).map((d) => d._id), `${title} (2 by age), round ${round}`).toEqual(byAge.slice(0, 2));
            expect(byAge.sort(), `${title} (by age), round ${round}`).toEqual(expected);
          }
        }
      });

      it('answers every filter the same inside a unit of work, for documents the unit holds', async () => {
        const c = await seeded();
        for (const [title, filter, expected] of filterCases) {
          const hit = await store.transaction(async (tx) => {
            const u = inUnit(tx, c);
            const found: string[] = [];
            for (const doc of people()) {
              // Loaded by _id first: the unit may answer the filtered write from what it holds.
              await u.findOne({ _id: doc._id });
              const res = await u.updateOne({ _id: doc._id, $and: [filter] }, { $inc: { visits: 1 } });
              if (res.matchedCount === 1) found.push(doc._id);
            }
            return found;
          });
          expect(hit.sort(), title).toEqual(expected);
        }
      });
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
        const a = (await c.findOne({ _id: 'a' }))!;
        expect({ city: a.city, profile: a.profile, settings: a.settings }).toEqual({ city: 'Tromsø', profile: { score: 10, lang: 'de' }, settings: { theme: 'dark' } });
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

      it('$inc adds to numbers and creates missing fields, also under record keys', async () => {
        const c = await seeded();
        await c.updateOne({ _id: 'a' }, { $inc: { age: 2, 'stats.views': 3, 'profile.score': -4, 'counts.17': 1 } });
        await c.updateOne({ _id: 'a' }, { $inc: { 'stats.views': 1, 'counts.17': 1, 'counts.x-y': 5 } });
        const a = (await c.findOne({ _id: 'a' }))!;
        expect({ age: a.age, stats: a.stats, profile: a.profile, counts: a.counts }).toEqual({ age: 33, stats: { views: 4 }, profile: { score: 6, lang: 'no' }, counts: { '17': 2, 'x-y': 5 } });
      });

      it('$push appends, creating the array', async () => {
        const c = await seeded();
        await c.updateOne({ _id: 'a' }, { $push: { tags: 'w', log: { at: 1 } } });
        await c.updateOne({ _id: 'a' }, { $push: { tags: 'w' } });
        expect(await c.findOne({ _id: 'a' }, { projection: { tags: 1, log: 1 } })).toEqual({ _id: 'a', tags: ['x', 'y', 'w', 'w'], log: [{ at: 1 }] });
      });

      it('$pull removes every equal value', async () => {
        const c = await seeded();
        await c.updateOne({ _id: 'a' }, { $push: { tags: 'x' } });
        await c.updateOne({ _id: 'a' }, { $pull: { tags: 'x' } });
        expect((await c.findOne({ _id: 'a' }))?.tags).toEqual(['y']);
        expect(await c.updateOne({ _id: 'a' }, { $pull: { tags: 'absent' } })).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
        expect(await c.countDocuments({ tags: 'x' })).toBe(1);
      });

      it('$addToSet adds only values not yet there', async () => {
        const c = await seeded();
        expect(await c.updateOne({ _id: 'a' }, { $addToSet: { tags: 'y' } })).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
        await c.updateOne({ _id: 'a' }, { $addToSet: { tags: 'q' } });
        await c.updateOne({ _id: 'a' }, { $addToSet: { tags: 'q' } });
        await c.updateOne({ _id: 'a' }, { $addToSet: { followers: 'b' } });
        await c.updateOne({ _id: 'a' }, { $addToSet: { tags: { $each: ['x', 'n', 'n'] } } });
        expect(await c.findOne({ _id: 'a' }, { projection: { tags: 1, followers: 1 } })).toEqual({ _id: 'a', tags: ['x', 'y', 'q', 'n'], followers: ['b'] });
        expect(ids(await c.find({ tags: 'n' }))).toEqual(['a']);
      });

      it('$max and $min keep the greater or lesser value and create missing fields', async () => {
        const c = await seeded();
        expect(await c.updateOne({ _id: 'a' }, { $max: { age: 20 } })).toMatchObject({ modifiedCount: 0 });
        await c.updateOne({ _id: 'a' }, { $max: { age: 50, best: 7 } });
        await c.updateOne({ _id: 'b' }, { $min: { age: 10, 'profile.score': 99, worst: 3 } });
        expect(await c.findOne({ _id: 'a' }, { projection: { age: 1, best: 1 } })).toEqual({ _id: 'a', age: 50, best: 7 });
        expect(await c.findOne({ _id: 'b' }, { projection: { age: 1, profile: 1, worst: 1 } })).toEqual({ _id: 'b', age: 10, profile: { score: 30, lang: 'en' }, worst: 3 });
        await c.updateOne({ _id: 'a' }, { $max: { joined: MAY } });
        expect((await c.findOne({ _id: 'a' }))?.joined).toBe(MAY);
      });

      it('applies several operators in one update', async () => {
        const c = await seeded();
        await c.updateOne({ handle: 'bob' }, { $set: { city: 'Oslo' }, $inc: { age: 1 }, $push: { tags: 'z' }, $unset: { profile: '' } });
        expect(await c.findOne({ _id: 'b' }, { projection: { city: 1, age: 1, tags: 1, profile: 1 } })).toEqual({ _id: 'b', city: 'Oslo', age: 26, tags: ['y', 'z'] });
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

      it('refuses an update that names a field twice, or a field and one inside it, and changes nothing (MongoDB: "would create a conflict")', async () => {
        const c = await seeded();
        const before = await c.find({}, { sort: { _id: 1 } });
        // A projection's seed (frozen, passed with every event) conflicts as any other operand.
        const seed = checkedOnce({ city: 'Oslo', stats: { views: 0 } });
        for (const [update, upsert] of [
          [{ $set: { city: 'Tromsø' }, $setOnInsert: { city: 'Oslo' } }, true],
          [{ $set: { profile: { score: 1, lang: 'fi' } }, $inc: { 'profile.score': 1 } }, false],
          [{ $set: { 'stats.views': 1 }, $unset: { stats: '' } }, false],
          [{ $set: { stats: { views: 1 }, 'stats.views': 2 } }, false],
          [{ $setOnInsert: seed, $inc: { 'stats.views': 1 } }, true],
          [{ $setOnInsert: seed, $set: { city: 'Bergen' } }, true],
          [{ $setOnInsert: { stats: { views: 1 }, 'stats.views': 2 } }, true],
        ] as const) {
          await expect(c.updateOne({ _id: 'a' }, update, { upsert }), JSON.stringify(update)).rejects.toThrow(/conflict/);
          // Refused for what it says, whether it matches a document or not.
          await expect(c.updateOne({ _id: 'nobody' }, update), JSON.stringify(update)).rejects.toThrow(/conflict/);
          await expect(c.updateMany({ handle: 'nobody' }, update), JSON.stringify(update)).rejects.toThrow(/conflict/);
          await expect(c.updateOne({ _id: 'new' }, update, { upsert: true }), JSON.stringify(update)).rejects.toThrow(/conflict/);
          await expect(c.updateMany({}, update), JSON.stringify(update)).rejects.toThrow(/conflict/);
        }
        expect(await c.find({}, { sort: { _id: 1 } })).toEqual(before);
        // Fields beside each other, or whose names only begin alike, do not conflict.
        await c.updateOne({ _id: 'a' }, { $set: { 'profile.score': 11, 'profile.lang': 'de' }, $inc: { 'counts.a': 1, 'counts.ab': 2 } });
        await c.updateOne({ _id: 'new' }, { $setOnInsert: seed, $inc: { visits: 1, 'counts.city': 1 } }, { upsert: true });
        expect(await c.findOne({ _id: 'a' }, { projection: { profile: 1, counts: 1 } })).toEqual({ _id: 'a', profile: { score: 11, lang: 'de' }, counts: { a: 1, ab: 2 } });
        expect(await c.findOne({ _id: 'new' }, { projection: { city: 1, stats: 1, visits: 1, counts: 1 } })).toEqual({ _id: 'new', city: 'Oslo', stats: { views: 0 }, visits: 1, counts: { city: 1 } });
      });

      it('keys named like what every object inherits (constructor, toString) are fields as any other', async () => {
        const c = await seeded();
        await c.updateOne({ _id: 'a' }, { $set: { counts: {} } });
        expect(await c.countDocuments({ 'counts.constructor': { $exists: true } })).toBe(0);
        await c.updateOne({ _id: 'a' }, { $inc: { 'counts.constructor': 2, 'counts.toString': 1 } });
        await c.updateOne({ _id: 'a' }, { $inc: { 'counts.constructor': 1 }, $max: { 'counts.valueOf': 4 } });
        await c.updateOne({ _id: 'b' }, { $inc: { 'counts.hasOwnProperty': 1 } });
        expect((await c.findOne({ _id: 'a' }))?.counts).toEqual({ constructor: 3, toString: 1, valueOf: 4 });
        expect((await c.findOne({ _id: 'b' }))?.counts).toEqual({ hasOwnProperty: 1 });
        expect(ids(await c.find({ 'counts.constructor': 3 }))).toEqual(['a']);
        expect(ids(await c.find({ 'counts.toString': { $exists: false } }))).toEqual(['b', 'c', 'd', 'e']);
        await c.updateOne({ _id: 'a' }, { $unset: { 'counts.constructor': '' } });
        expect((await c.findOne({ _id: 'a' }))?.counts).toEqual({ toString: 1, valueOf: 4 });
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
        expect(await c.findOne({ _id: result.upsertedId! })).toEqual({ _id: result.upsertedId, handle: 'zed', profile: { lang: 'fi' }, kind: 'bot', age: 7, via: 'upsert', visits: 1, tags: ['new'] });
        expect(await c.countDocuments()).toBe(6);
      });

      it('uses the _id of the filter, and matches the upserted document next time', async () => {
        const c = empty();
        expect(await c.updateOne({ _id: 'u1' }, { $inc: { visits: 1 }, $setOnInsert: { first: true } }, { upsert: true })).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: 'u1' });
        expect(await c.updateOne({ _id: 'u1' }, { $inc: { visits: 1 }, $setOnInsert: { first: false } }, { upsert: true })).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
        expect(await c.find({})).toEqual([{ _id: 'u1', visits: 2, first: true }]);
      });

      it('refuses to insert a second document with the _id of one the filter did not match', async () => {
        const c = await seeded();
        const error = await c.updateOne({ _id: 'a', age: 99 }, { $set: { seen: true } }, { upsert: true }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect((await c.findOne({ _id: 'a' }))?.seen).toBeUndefined();
      });

      it('without upsert, inserts nothing', async () => {
        const c = empty();
        await c.updateOne({ _id: 'u1' }, { $set: { visits: 1 } });
        expect(await c.countDocuments()).toBe(0);
      });
    });

    describe('replaceOne', () => {
      it('replaces the whole document and keeps its _id', async () => {
        const c = await seeded();
        expect(await c.replaceOne({ handle: 'ann' }, { _id: 'a', handle: 'anne', age: 1, tags: [] })).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
        expect(await c.findOne({ _id: 'a' })).toEqual({ _id: 'a', handle: 'anne', age: 1, tags: [] });
        expect(await c.replaceOne({ _id: 'a' }, { _id: 'a', handle: 'anne', age: 1, tags: [] })).toEqual({ matchedCount: 1, modifiedCount: 0, upsertedId: null });
      });

      it('inserts with upsert when nothing matches, and not without', async () => {
        const c = empty();
        const doc = (age: number): Person => ({ _id: 'r1', handle: 'r', age, tags: [] });
        expect(await c.replaceOne({ _id: 'r1' }, doc(1))).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: null });
        expect(await c.countDocuments()).toBe(0);
        expect(await c.replaceOne({ _id: 'r1' }, doc(1), { upsert: true })).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: 'r1' });
        expect(await c.replaceOne({ _id: 'r1' }, doc(2), { upsert: true })).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
        expect(await c.find({})).toEqual([doc(2)]);
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
        await c.insertOne({ _id: 'a', handle: 'again', age: 1, tags: [] });
        expect((await c.findOne({ _id: 'a' }))?.handle).toBe('again');
      });
    });

    describe('undefined', () => {
      // A value missing where one was meant: MongoDB's driver would drop the condition and reach
      // every document, SQLite none. Every adapter refuses it, and nothing changes.
      const refused = async (call: () => Promise<unknown>) => expect(await call().then(() => 'answered', (error: unknown) => (error instanceof Error ? error.message : String(error)))).toMatch(/holds undefined/);
      const nobody = undefined as unknown as string;

      it('refuses reads whose filter holds undefined anywhere', async () => {
        const c = await seeded();
        await refused(() => c.find({ handle: nobody }));
        await refused(() => c.findOne({ city: 'Oslo', handle: nobody }));
        await refused(() => c.find({ _id: 'a', handle: nobody }));
        await refused(() => c.find({ age: { $in: [31, undefined as unknown as number] } }));
        await refused(() => c.find({ $or: [{ handle: 'ann' }, { handle: { $ne: nobody } }] }));
        await refused(() => c.countDocuments({ tags: nobody }));
        await refused(() => c.countBy({ handle: nobody }, 'city'));
        await refused(() => c.byIds(['a', nobody]));
        expect(await c.countDocuments({ handle: 'ann' })).toBe(1);
      });

      it('refuses writes whose filter or update holds undefined, and changes nothing', async () => {
        const c = await seeded();
        await refused(() => c.deleteMany({ handle: nobody }));
        await refused(() => c.deleteOne({ _id: nobody }));
        await refused(() => c.updateMany({ handle: nobody }, { $set: { city: 'Paris' } }));
        await refused(() => c.updateOne({ _id: 'a' }, { $set: { city: undefined } }));
        await refused(() => c.updateOne({ _id: 'z' }, { $set: { handle: 'zed' }, $setOnInsert: { age: undefined as unknown as number, tags: [] } }, { upsert: true }));
        await refused(() => c.replaceOne({ handle: nobody }, { _id: 'a', handle: 'ann2', age: 1, tags: [] }));
        expect(await c.find({}, { sort: { _id: 1 } })).toEqual(people());
      });

      it('checks an operand passed again and again once (checkedOnce), keeps it as checked, and still refuses undefined beside it', async () => {
        const c = await seeded();
        expect(() => checkedOnce({ city: 'Oslo', age: nobody })).toThrow(/holds undefined at age/);
        const seed = checkedOnce({ city: 'Oslo', tags: ['new'] });
        // Frozen to its depth: nobody can put undefined into it after the check.
        expect(() => (seed.tags as string[]).push(nobody)).toThrow();
        await refused(() => c.updateOne({ _id: 'z' }, { $set: { handle: nobody }, $setOnInsert: seed }, { upsert: true }));
        expect(await c.findOne({ _id: 'z' })).toBeNull();
        await c.updateOne({ _id: 'z' }, { $set: { handle: 'zed' }, $setOnInsert: seed }, { upsert: true });
        await c.updateOne({ _id: 'y' }, { $set: { handle: 'yan' }, $setOnInsert: seed }, { upsert: true });
        // Each document has a copy of its own: the seed itself is never changed.
        await c.updateOne({ _id: 'z' }, { $push: { tags: 'more' } });
        expect(await c.findOne({ _id: 'z' })).toEqual({ _id: 'z', handle: 'zed', city: 'Oslo', tags: ['new', 'more'] });
        expect(await c.findOne({ _id: 'y' })).toEqual({ _id: 'y', handle: 'yan', city: 'Oslo', tags: ['new'] });
        expect(seed).toEqual({ city: 'Oslo', tags: ['new'] });
      });
    });

    describe('indexes', () => {
      interface Item extends Doc {
        n: number | string;
        ref: string;
        group?: string | null;
        tags: string[];
        meta?: { kind: string };
        at: string;
      }
      const itemSpec = (name: string, indexed: boolean): CollectionSpec<Item> =>
        collectionSpec<Item>({
          name,
          arrays: ['tags'],
          indexes: indexed ? [{ keys: { group: 1, at: -1, _id: -1 } }, { keys: { at: -1, _id: -1 } }, { keys: { tags: 1 } }, { keys: { 'meta.kind': 1, n: -1 } }, { keys: { ref: 1 } }] : [],
        });

      it('indexed queries answer exactly as unindexed ones, before and after writes', async () => {
        const plain = opened(itemSpec(unique('plain'), false));
        const indexed = opened(itemSpec(unique('indexed'), true));
        for (let i = 0; i < 240; i++) {
          const doc: Item = { _id: `d${String(i).padStart(3, '0')}`, n: (i * 37) % 101, ref: `r${i}`, tags: [`t${i % 4}`, `t${i % 7}`], at: new Date(Date.UTC(2024, 0, 1) + ((i * 7919) % 240) * 3_600_000).toISOString() };
          if (i % 11 !== 0) doc.group = i % 13 === 0 ? null : `g${i % 6}`;
          if (i % 3 === 0) doc.meta = { kind: i % 2 === 0 ? 'even' : 'odd' };
          if (i % 5 === 0) doc.n = String(doc.n);
          await plain.insertOne(doc);
          await indexed.insertOne(doc);
        }
        const queries: Filter<Item>[] = [
          { group: 'g1' },
          { group: { $eq: 'g2' } },
          { group: { $in: ['g3', 'g4', 'nope'] } },
          { group: null },
          { group: { $in: [null, 'g0'] } },
          { group: 'g1', n: { $gt: 50 } },
          { group: { $in: ['g1', 'g5'] }, tags: 't3' },
          { group: { $in: ['g1', 'g2', 'g5'] }, $or: [{ at: { $lt: '2024-01-05T00:00:00.000Z' } }, { at: '2024-01-05T00:00:00.000Z', _id: { $lt: 'd100' } }] },
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
            for (const options of [
              { sort: { n: -1, _id: 1 } as const, skip: 2, limit: 5 },
              { sort: { at: -1, _id: -1 } as const, limit: 7 },
              { sort: { at: 1, _id: 1 } as const, limit: 7 },
              { sort: { at: -1, _id: -1 } as const, skip: 3, limit: 4 },
            ]) {
              expect(inOrder(await indexed.find(filter, options)), `${JSON.stringify(filter)} ${JSON.stringify(options)}`).toEqual(inOrder(await plain.find(filter, options)));
            }
            expect(await indexed.countDocuments(filter)).toBe(await plain.countDocuments(filter));
          }
        };
        await compare();
        for (const c of [plain, indexed]) {
          await c.updateMany({ group: 'g1' }, { $set: { group: 'g2' }, $push: { tags: 't6' } });
          await c.updateOne({ _id: 'd004' }, { $unset: { group: '' } });
          await c.updateOne({ _id: 'd005' }, { $set: { 'meta.kind': 'odd', ref: 'moved' } });
          await c.updateOne({ _id: 'd006' }, { $pull: { tags: 't6' } });
          await c.deleteMany({ group: 'g3' });
          await c.replaceOne({ _id: 'd010' }, { _id: 'd010', group: 'g4', ref: 'r10', tags: [], n: 3, at: '2024-01-02T00:00:00.000Z' });
          await c.updateOne({ _id: 'up1', group: 'g9' }, { $set: { tags: ['t6'], n: 1, ref: 'up1', at: '2024-01-03T00:00:00.000Z' } }, { upsert: true });
          await store.transaction(async (tx) => {
            const u = inUnit(tx, c);
            await u.updateOne({ _id: 'd007' }, { $set: { group: 'g5', at: '2024-02-01T00:00:00.000Z' }, $addToSet: { tags: 't9' } });
            await u.updateOne({ _id: 'd008' }, { $set: { group: 'g5' } });
            await u.deleteOne({ _id: 'd009' });
          });
        }
        await compare();
      });
    });

    describe('reads after writes', () => {
      // Each case reads first (an adapter may keep what it read), writes, then reads again.
      const read = async (c: Collection<Person>) => ({
        one: await c.findOne({ _id: 'a' }),
        listed: (await c.find({ _id: { $in: ['a', 'b'] } })).map((p) => `${p._id}:${p.age}`).sort(),
        ranged: (await c.find({ age: { $gte: 0 } }, { sort: { _id: 1 } })).map((p) => `${p._id}:${p.age}`),
      });

      it('sees every kind of write on the next read', async () => {
        const c = await seeded();
        await read(c);
        await c.updateOne({ _id: 'a' }, { $inc: { age: 1 } });
        expect((await read(c)).one?.age).toBe(32);
        await c.updateMany({ city: 'Bergen' }, { $inc: { age: 10 } });
        expect((await read(c)).listed).toEqual(['a:32', 'b:35']);
        await c.replaceOne({ _id: 'b' }, { _id: 'b', handle: 'bob', age: 1, tags: [] });
        expect((await read(c)).listed).toEqual(['a:32', 'b:1']);
        expect(await c.find({ _id: { $in: ['z'] } })).toEqual([]);
        expect(await c.findOne({ _id: 'z' })).toBeNull();
        await c.updateOne({ _id: 'z' }, { $set: { handle: 'zed', age: 9, tags: [] } }, { upsert: true });
        expect((await c.find({ _id: { $in: ['z'] } })).map((p) => p.age)).toEqual([9]);
        await c.deleteOne({ _id: 'a' });
        const afterDelete = await read(c);
        expect(afterDelete.one).toBeNull();
        expect(afterDelete.listed).toEqual(['b:1']);
        await c.deleteMany({ age: { $lt: 10 } });
        expect((await read(c)).ranged).toEqual(['c:41', 'd:40', 'e:19']);
        await c.insertOne({ _id: 'a', handle: 'ann', age: 2, tags: [] });
        expect((await read(c)).one?.age).toBe(2);
      });

      it('sees what a unit committed, and nothing of a unit that failed', async () => {
        const c = await seeded();
        await read(c);
        await store.transaction(async (tx) => {
          const u = inUnit(tx, c);
          await u.updateOne({ _id: 'a' }, { $set: { age: 70 } });
          await u.updateOne({ _id: 'b' }, { $set: { age: 71 } });
        });
        expect((await read(c)).listed).toEqual(['a:70', 'b:71']);
        await expect(
          store.transaction(async (tx) => {
            const u = inUnit(tx, c);
            await u.updateOne({ _id: 'a' }, { $set: { age: 1 } });
            await u.deleteOne({ _id: 'b' });
            // Read by others while the unit is open, then the unit fails.
            await Promise.resolve();
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        expect(await read(c)).toEqual({ one: expect.objectContaining({ age: 70 }), listed: ['a:70', 'b:71'], ranged: ['a:70', 'b:71', 'c:31', 'd:40', 'e:19'] });
      });

      it('answers reads made while a unit is open with what is committed, and with the unit\'s work after it ends', async () => {
        const c = await seeded();
        await read(c); // what was read before the unit began
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let wrote!: () => void;
        const written = new Promise<void>((resolve) => (wrote = resolve));
        const unit = store.transaction(async (tx) => {
          const u = inUnit(tx, c);
          await u.updateOne({ _id: 'a' }, { $set: { age: 80 } });
          await u.find({ tags: 'x' }); // a query inside the unit writes its pending work to the database
          wrote();
          await gate;
        });
        await written;
        // Whatever these see (committed data, or the unit's own), it matches the filter, and
        // the unit's commit is not hidden by it.
        try {
          await read(c);
          for (const doc of await c.find({ _id: { $in: ['a', 'b'] }, handle: 'ann' })) expect(doc.handle).toBe('ann');
          for (const doc of await c.find({ age: 80 })) expect(doc.age).toBe(80);
          // Counted either before the unit's update of ann (31) or after it (80), never half of it.
          expect([new Map([['Oslo', 1], ['Bergen', 1]]), new Map([['Bergen', 1]])]).toContainEqual(await c.countBy({ age: 31 }, 'city'));
        } finally {
          release();
        }
        await unit;
        expect((await read(c)).one?.age).toBe(80);
      });
    });

    describe('units of work', () => {
      it('a unit sees its own writes, and everyone sees them once it ends', async () => {
        const c = await seeded();
        const seenInside = await store.transaction(async (tx) => {
          const u = inUnit(tx, c);
          await u.updateOne({ _id: 'a' }, { $inc: { age: 1 } });
          await u.insertOne({ _id: 'f', handle: 'fay', age: 50, tags: ['x'] });
          await u.updateOne({ _id: 'f' }, { $inc: { age: 1 } }, { upsert: true });
          await u.deleteOne({ _id: 'b' });
          return {
            a: (await u.findOne({ _id: 'a' }))?.age,
            f: (await u.findOne({ _id: 'f' }))?.age,
            b: await u.findOne({ _id: 'b' }),
            tagged: ids(await u.find({ tags: 'x' })),
            count: await u.countDocuments({ age: { $gt: 30 } }),
            byCity: await u.countBy({ age: { $gt: 30 } }, 'city'),
          };
        });
        expect(seenInside).toEqual({ a: 32, f: 51, b: null, tagged: ['a', 'e', 'f'], count: 4, byCity: new Map([['Oslo', 1], ['Bergen', 1], [null, 2]]) });
        expect(await c.countBy({ age: { $gt: 30 } }, 'city')).toEqual(new Map([['Oslo', 1], ['Bergen', 1], [null, 2]]));
        expect((await c.findOne({ _id: 'a' }))?.age).toBe(32);
        expect(ids(await c.find({ age: { $gt: 30 } }))).toEqual(['a', 'c', 'd', 'f']);
        expect(await c.findOne({ _id: 'b' })).toBeNull();
      });

      it('returns what the unit returns, and passes its error on', async () => {
        const c = empty();
        expect(await store.transaction(async () => 42)).toBe(42);
        await expect(store.transaction(async (tx) => {
          const u = inUnit(tx, c);
          await u.insertOne({ _id: 'one', handle: 'x', age: 1, tags: [] });
          throw new Error('boom');
        })).rejects.toThrow('boom');
      });
    });

    describe('keyset pages (lists beyond the home tabs)', () => {
      /** Twenty posts of one thread, ten instants with two posts each (the id breaks the tie), and noise of another thread. */
      async function thread(): Promise<Collection<Person>> {
        const c = empty('thread', [{ keys: { city: 1, joined: -1, _id: -1 } }]);
        for (let i = 0; i < 20; i++) await c.insertOne({ _id: `p${String(i).padStart(2, '0')}`, handle: `h${i}`, age: i, city: 'Oslo', tags: [], joined: `2024-01-${String(1 + Math.floor(i / 2)).padStart(2, '0')}T00:00:00.000Z` });
        await c.insertOne({ _id: 'x', handle: 'other', age: 0, city: 'Rome', tags: [], joined: MAY });
        return c;
      }
      const walk = async (c: Collection<Person>, limit: number, keep?: (d: Person[]) => Person[], between?: () => Promise<void>) => {
        const seen: string[] = [];
        let before: string | undefined;
        for (let n = 0; n < 50; n++) {
          const page = await keysetPage(c, { limit, ...(before ? { before } : {}) }, { filter: { city: 'Oslo' }, key: 'joined', direction: -1, parseKey: instantKey, ...(keep ? { keep } : {}) });
          seen.push(...page.items.map((d) => d._id));
          if (!page.hasMore) {
            expect(page.nextBefore).toBeNull();
            return seen;
          }
          before = page.nextBefore!;
          await between?.();
        }
        throw new Error('no end');
      };

      it('walks every document once, newest first with ties by id, while newer ones are added between pages', async () => {
        const c = await thread();
        let added = 0;
        const seen = await walk(c, 3, undefined, async () => c.insertOne({ _id: `new${++added}`, handle: 'n', age: 0, city: 'Oslo', tags: [], joined: MAY }));
        expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => `p${String(19 - i).padStart(2, '0')}`));
      });

      it('skips kept-out documents inside the walk, so only the last page is short', async () => {
        const c = await thread();
        const pages: number[] = [];
        let before: string | undefined;
        for (;;) {
          const page = await keysetPage(c, { limit: 4, ...(before ? { before } : {}) }, { filter: { city: 'Oslo' }, key: 'joined', direction: -1, keep: (d) => d.filter((p) => p.age % 3 === 0) });
          pages.push(page.items.length);
          if (!page.hasMore) break;
          before = page.nextBefore!;
        }
        expect(pages).toEqual([4, 3]);
      });

      it('orders ascending by a unique tie field other than the id', async () => {
        const c = await seeded([{ keys: { age: 1, handle: 1, _id: 1 } }]);
        const first = await keysetPage(c, { limit: 2 }, { filter: {}, key: 'age', tie: 'handle', direction: 1, parseKey: (k) => Number(k) });
        expect(inOrder(first.items)).toEqual(['e', 'b']);
        expect(first.nextBefore).toBe('25|bob');
        const second = await keysetPage(c, { limit: 2, before: first.nextBefore! }, { filter: {}, key: 'age', tie: 'handle', direction: 1, parseKey: (k) => Number(k) });
        expect(inOrder(second.items)).toEqual(['a', 'c']);
      });

      it('refuses a cursor it cannot read', async () => {
        const c = await thread();
        for (const before of ['nobar', '|x', 'x|', 'yesterday|p01']) await expect(keysetPage(c, { before }, { filter: { city: 'Oslo' }, key: 'joined', direction: -1, parseKey: instantKey })).rejects.toMatchObject({ errorType: 'missing_request_data' });
      });
    });

    it('drop empties the named collections, and they stay usable', async () => {
      const crowd = await seeded();
      const other = empty('other');
      await other.insertOne({ _id: 'o', handle: 'o', age: 1, tags: ['q'] });
      await store.drop([crowd.name]);
      expect(await crowd.countDocuments()).toBe(0);
      expect(await other.countDocuments()).toBe(1);
      await crowd.insertOne({ _id: 'a', handle: 'ann', age: 1, tags: ['t'] });
      expect(await crowd.find({ tags: 't' })).toEqual([{ _id: 'a', handle: 'ann', age: 1, tags: ['t'] }]);
    });

    // Answers made at one committed version are given again while it holds (RepeatedAnswers):
    // every change that reads outside a unit can see must move it, and nothing else may.
    it('moves its committed version with every change reads can see, and only then (or cannot tell)', async () => {
      const c = empty();
      const version = () => store.committedVersion();
      if (version() === null) return expect(version()).toBeNull();
      let before = version();
      const moved = () => {
        const now = version();
        const changed = now !== before;
        before = now;
        return changed;
      };
      await c.insertOne({ _id: 'a', handle: 'ann', age: 1, tags: [] });
      expect(moved()).toBe(true);
      await c.find({});
      await c.findOne({ _id: 'a' });
      await c.countDocuments();
      expect(moved()).toBe(false);
      await c.updateOne({ _id: 'nobody' }, { $set: { age: 2 } });
      await c.updateOne({ _id: 'a' }, { $set: { age: 2 } });
      expect(moved()).toBe(true);
      await store.transaction(async (tx) => {
        const u = inUnit(tx, c);
        await u.insertOne({ _id: 'b', handle: 'bob', age: 1, tags: [] });
        await u.deleteOne({ _id: 'a' });
        // Not committed yet: what reads outside the unit see has not changed.
        expect(moved()).toBe(false);
      });
      expect(moved()).toBe(true);
      await c.deleteOne({ _id: 'b' });
      expect(moved()).toBe(true);
      await store.drop([c.name]);
      expect(moved()).toBe(true);
    });
  });
}
