import { randomUUID } from 'node:crypto';
import { MongoClient, MongoServerError, type Db, type Filter as MongoFilter, type UpdateFilter } from 'mongodb';
import { DuplicateKeyError, eachWriteAlone, refuseUndefined, type Collection, type CollectionSpec, type Doc, type DocumentStore, type UpdateResult } from '../ports/document-store.ts';

export type MongoDocumentStoreOptions =
  /** The store opens its own client and closes it in `close`. */
  | { url: string; database: string }
  /** A client shared with other stores: `close` leaves it open. */
  | { client: MongoClient; database: string };

/** Opens a MongoDB client; the driver connects on first use and reconnects by itself. */
export function connectMongo(url: string): MongoClient {
  return new MongoClient(url, { ignoreUndefined: true });
}

const isDuplicateKey = (err: unknown): err is MongoServerError => err instanceof MongoServerError && (err.code === 11000 || err.code === 11001);

/** Runs a write, turning MongoDB's E11000 into the port's DuplicateKeyError. */
async function mapDuplicate<R>(collection: string, write: () => Promise<R>): Promise<R> {
  try {
    return await write();
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const index = /index: (\S+) dup key/.exec(err.message)?.[1] ?? Object.keys((err.keyPattern as Record<string, unknown> | undefined) ?? {}).join('_');
    throw new DuplicateKeyError(collection, index || 'unknown');
  }
}

const result = (r: { matchedCount: number; modifiedCount: number; upsertedId?: unknown }): UpdateResult => ({
  matchedCount: r.matchedCount,
  modifiedCount: r.modifiedCount,
  upsertedId: r.upsertedId === null || r.upsertedId === undefined ? null : String(r.upsertedId),
});

/**
 * Ids are strings in this system. An upsert whose filter names no _id would get an ObjectId from
 * MongoDB; it gets a string instead, in the embedded store's format.
 */
function withStringId(filter: Record<string, unknown>, update: Record<string, unknown>, upsert: boolean | undefined): Record<string, unknown> {
  if (!upsert || '_id' in filter) return update;
  return { ...update, $setOnInsert: { _id: randomUUID().replaceAll('-', ''), ...(update.$setOnInsert as object | undefined) } };
}

const indexName = (keys: Record<string, unknown>): string => `castie_${Object.entries(keys).map(([k, d]) => `${k}_${String(d)}`).join('_')}`;

/**
 * The document store port on MongoDB through the official driver: a thin wrapper, since the port
 * is a MongoDB subset. One store is one database (the service's read models). A collection's
 * indexes are created on its first use; indexes this code made that its spec no longer names are
 * dropped. Units of work are not transactions here (see the port).
 */
export function createMongoDocumentStore(options: MongoDocumentStoreOptions): DocumentStore {
  const ownsClient = 'url' in options;
  const client = 'url' in options ? connectMongo(options.url) : options.client;
  const db: Db = client.db(options.database);
  const ready = new Map<string, Promise<void>>();

  async function ensureIndexes(spec: CollectionSpec<Doc>): Promise<void> {
    const c = db.collection(spec.name);
    const wanted = new Map((spec.indexes ?? []).map((index) => [indexName(index.keys), index.keys as Record<string, 1 | -1>]));
    const existing = await c.indexes().catch(() => [] as { name?: string }[]);
    for (const index of existing) if (index.name?.startsWith('castie_') && !wanted.has(index.name)) await c.dropIndex(index.name);
    for (const [name, keys] of wanted) await c.createIndex(keys, { name });
  }

  function collection<T extends Doc>(spec: CollectionSpec<T>): Collection<T> {
    const name = spec.name;
    // The driver's generic filter types differ from the port's; the port's are the checked ones.
    const c = db.collection<Doc>(name);
    const opened = async () => {
      let done = ready.get(name);
      if (!done) {
        done = ensureIndexes(spec as unknown as CollectionSpec<Doc>);
        ready.set(name, done);
        done.catch(() => ready.delete(name));
      }
      await done;
      return c;
    };
    const filterOf = (filter: unknown): MongoFilter<Doc> => refuseUndefined('filter', (filter ?? {}) as MongoFilter<Doc>);
    const updateOf = (update: unknown): Record<string, unknown> => refuseUndefined('update', update as Record<string, unknown>);
    const handle = {
      name,
      inAtomicUnit: () => false,
      async findOne(filter: unknown, findOptions: object = {}) {
        return (await opened()).findOne(filterOf(filter), findOptions);
      },
      async find(filter: unknown, findOptions: object = {}) {
        return (await opened()).find(filterOf(filter), findOptions).toArray();
      },
      async byIds(ids: readonly string[]) {
        refuseUndefined('filter', ids);
        const found = new Map<string, Doc>();
        if (ids.length === 0) return found;
        for (const doc of await (await opened()).find({ _id: { $in: [...new Set(ids)] } }).toArray()) found.set(doc._id, doc);
        return found;
      },
      async countDocuments(filter?: unknown) {
        return (await opened()).countDocuments(filterOf(filter));
      },
      async countBy(filter: unknown, field: string) {
        const groups = await (await opened()).aggregate<{ _id: string | null; n: number }>([{ $match: filterOf(filter) }, { $group: { _id: `$${field}`, n: { $sum: 1 } } }]).toArray();
        return new Map(groups.map((g) => [g._id ?? null, g.n]));
      },
      async insertOne(doc: Doc) {
        const col = await opened();
        await mapDuplicate(name, () => col.insertOne({ ...doc }));
      },
      async replaceOne(filter: unknown, doc: Doc, replaceOptions: { upsert?: boolean } = {}) {
        const col = await opened();
        return result(await mapDuplicate(name, () => col.replaceOne(filterOf(filter), doc, { upsert: replaceOptions.upsert ?? false })));
      },
      async updateOne(filter: unknown, update: unknown, updateOptions: { upsert?: boolean } = {}) {
        const col = await opened();
        const upsert = updateOptions.upsert ?? false;
        const f = filterOf(filter) as Record<string, unknown>;
        return result(await mapDuplicate(name, () => col.updateOne(f, withStringId(f, updateOf(update), upsert) as UpdateFilter<Doc>, { upsert })));
      },
      async updateMany(filter: unknown, update: unknown) {
        const col = await opened();
        return result(await mapDuplicate(name, () => col.updateMany(filterOf(filter), updateOf(update) as UpdateFilter<Doc>)));
      },
      async deleteOne(filter: unknown) {
        return (await (await opened()).deleteOne(filterOf(filter))).deletedCount;
      },
      async deleteMany(filter?: unknown) {
        return (await (await opened()).deleteMany(filterOf(filter))).deletedCount;
      },
    };
    return handle as unknown as Collection<T>;
  }

  return {
    collection,
    // Not atomic on MongoDB: projections are idempotent instead (updateOnce), see the port. The
    // unit's collections are the store's.
    transaction: (fn) => fn(eachWriteAlone({ collection })),
    // MongoDB keeps its indexes during a rebuild: no bulk-load mode here.
    beginBulkLoad: async () => {},
    endBulkLoad: async () => {},
    async drop(names) {
      for (const name of names) {
        ready.delete(name);
        await db
          .collection(name)
          .drop()
          .catch((err: unknown) => {
            // NamespaceNotFound: nothing to drop.
            if (!(err instanceof MongoServerError && err.code === 26)) throw err;
          });
      }
    },
    // Other processes (replicas, the operator's tools) write the same database.
    committedVersion: () => null,

    async close() {
      if (ownsClient) await client.close();
    },
  };
}
