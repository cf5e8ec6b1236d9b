import { randomUUID } from 'node:crypto';
import { MongoClient, MongoServerError, type Db, type Filter as MongoFilter, type UpdateFilter } from 'mongodb';
import { DuplicateKeyError, type Collection, type Doc, type DocumentStore, type Filter, type Update, type UpdateResult } from '../ports/document-store.ts';

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
function withStringId(filter: Filter, update: Update, upsert: boolean | undefined): Update {
  if (!upsert || '_id' in filter) return update;
  return { ...update, $setOnInsert: { _id: randomUUID().replaceAll('-', ''), ...update.$setOnInsert } };
}

/**
 * The document store port on MongoDB through the official driver: a thin wrapper, since the port
 * is a MongoDB subset. One store is one database (the service's read models); `dropAll` drops it.
 */
export function createMongoDocumentStore(options: MongoDocumentStoreOptions): DocumentStore {
  const ownsClient = 'url' in options;
  const client = 'url' in options ? connectMongo(options.url) : options.client;
  const db: Db = client.db(options.database);

  function collection<T extends Doc = Doc>(name: string): Collection<T> {
    // The driver's generic filter types are stricter than the port's plain records.
    const c = db.collection<Doc>(name);
    const filterOf = (filter: Filter): MongoFilter<Doc> => filter as MongoFilter<Doc>;
    return {
      name,
      async createIndex(keys, indexOptions = {}) {
        await mapDuplicate(name, () => c.createIndex(keys, { ...(indexOptions.unique ? { unique: true } : {}), ...(indexOptions.name ? { name: indexOptions.name } : {}) }));
      },
      async findOne(filter, findOptions = {}) {
        return (await c.findOne(filterOf(filter), findOptions)) as unknown as T | null;
      },
      async find(filter, findOptions = {}) {
        return (await c.find(filterOf(filter), findOptions).toArray()) as unknown as T[];
      },
      async countDocuments(filter = {}) {
        return c.countDocuments(filterOf(filter));
      },
      async insertOne(doc) {
        await mapDuplicate(name, () => c.insertOne({ ...doc }));
      },
      async replaceOne(filter, doc, replaceOptions = {}) {
        return result(await mapDuplicate(name, () => c.replaceOne(filterOf(filter), doc, { upsert: replaceOptions.upsert ?? false })));
      },
      async updateOne(filter, update, updateOptions = {}) {
        const upsert = updateOptions.upsert ?? false;
        return result(await mapDuplicate(name, () => c.updateOne(filterOf(filter), withStringId(filter, update, upsert) as UpdateFilter<Doc>, { upsert })));
      },
      async updateMany(filter, update) {
        return result(await mapDuplicate(name, () => c.updateMany(filterOf(filter), update as UpdateFilter<Doc>)));
      },
      async deleteOne(filter) {
        return (await c.deleteOne(filterOf(filter))).deletedCount;
      },
      async deleteMany(filter = {}) {
        return (await c.deleteMany(filterOf(filter))).deletedCount;
      },
    };
  }

  return {
    collection,
    async dropAll() {
      await db.dropDatabase();
    },
    async close() {
      if (ownsClient) await client.close();
    },
  };
}
