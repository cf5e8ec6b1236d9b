/**
 * The document store port for read models: a MongoDB-compatible subset, so that the MongoDB
 * adapter is a thin wrapper of the official driver and the embedded one answers the same queries.
 *
 * Supported: filters with equality on (dotted) fields, $eq $ne $gt $gte $lt $lte $in $nin $exists
 * $and $or $regex; sort on one or more fields; skip/limit; projection of included fields; update
 * operators $set $unset $inc $push $pull $addToSet $setOnInsert $max $min; upsert; unique and
 * secondary indexes.
 */
export type Doc = { _id: string } & Record<string, unknown>;
export type Filter = Record<string, unknown>;
export type Update = Partial<Record<'$set' | '$unset' | '$inc' | '$push' | '$pull' | '$addToSet' | '$setOnInsert' | '$max' | '$min', Record<string, unknown>>>;
export type Sort = Record<string, 1 | -1>;

export interface FindOptions {
  sort?: Sort;
  skip?: number;
  limit?: number;
  /** Fields to return, e.g. { handle: 1 } (with _id always included). */
  projection?: Record<string, 1>;
}

export interface UpdateResult {
  matchedCount: number;
  modifiedCount: number;
  upsertedId: string | null;
}

/** Thrown when a write would break a unique index (MongoDB error code 11000). */
export class DuplicateKeyError extends Error {
  readonly code = 11000;
  constructor(
    readonly collection: string,
    readonly index: string,
  ) {
    super(`duplicate key in ${collection} for index ${index}`);
    this.name = 'DuplicateKeyError';
  }
}

export interface Collection<T extends Doc = Doc> {
  readonly name: string;
  /** Idempotent: creating an existing index again is a no-op. */
  createIndex(keys: Record<string, 1 | -1>, options?: { unique?: boolean; name?: string }): Promise<void>;
  findOne(filter: Filter, options?: Pick<FindOptions, 'projection' | 'sort'>): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  countDocuments(filter?: Filter): Promise<number>;
  insertOne(doc: T): Promise<void>;
  /** Replaces the whole document; with upsert, inserts it when nothing matches. */
  replaceOne(filter: Filter, doc: T, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateMany(filter: Filter, update: Update): Promise<UpdateResult>;
  deleteOne(filter: Filter): Promise<number>;
  deleteMany(filter?: Filter): Promise<number>;
}

export interface DocumentStore {
  collection<T extends Doc = Doc>(name: string): Collection<T>;
  /** Drops every collection (rebuilding read models starts here). */
  dropAll(): Promise<void>;
  close(): Promise<void>;
}
