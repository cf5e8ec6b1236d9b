import { deepFreeze } from '../deep-freeze.ts';

/**
 * The document store port for read models: a typed subset of MongoDB's query language, so that
 * the MongoDB adapter is a thin wrapper of the official driver and the SQLite adapter answers the
 * same queries from B-tree indexes. Types follow the driver's style: `Filter<T>`, `Update<T>` and
 * `Sort<T>` only accept the document's own fields (dotted paths into objects included) with
 * values of the field's type, so call sites never cast.
 *
 * The subset, which the conformance suite pins down for every adapter:
 * - documents are JSON values (strings, finite numbers, booleans, null, arrays, objects), `_id` a
 *   string; dates are ISO-8601 strings, which sort as instants;
 * - a field holds one type; fields that hold arrays are declared in the collection's spec
 *   (`arrays`), and a condition on such a field matches when any element matches (MongoDB's
 *   semantics); other fields are scalars or objects;
 * - filters: equality on (dotted) fields, $eq $ne $gt $gte $lt $lte $in $nin $exists $regex,
 *   $and $or; null matches null and missing fields; $ne and $nin match missing fields;
 * - sort on one or more scalar fields (null and missing first ascending), skip, limit,
 *   projection of included fields;
 * - updates: $set $unset $inc $max $min $push $pull (by value) $addToSet ($each) $setOnInsert,
 *   upsert; unique and secondary indexes (compound, ordered), declared with the collection;
 * - a filter, update or list of ids holding `undefined` anywhere is refused (`refuseUndefined`).
 */

/** A JSON scalar as documents hold it. */
export type Scalar = string | number | boolean | null;

/**
 * Every read-model document. `_applied` and `_replayed` are `updateOnce`'s records of the log
 * records it applied: the last offset per topic partition, and each replayed dead letter.
 */
export interface Doc {
  _id: string;
  _applied?: Record<string, number>;
  _replayed?: Record<string, number>;
}

type Leaf = Scalar | undefined | readonly unknown[];
type Prev = [never, 0, 1, 2, 3];

/** Dotted paths of T's fields, into objects and records (not into arrays), at most 4 deep. */
export type Path<T, D extends number = 4> = [D] extends [never]
  ? never
  : {
      [K in keyof T & string]: K | (NonNullable<T[K]> extends Leaf ? never : `${K}.${Path<NonNullable<T[K]>, Prev[D]>}`);
    }[keyof T & string];

/** The type of the value at a dotted path. */
export type PathValue<T, P extends string> = P extends `${infer K}.${infer R}`
  ? K extends keyof T
    ? PathValue<NonNullable<T[K]>, R>
    : never
  : P extends keyof T
    ? T[P]
    : never;

type ElementOf<V> = V extends readonly (infer E)[] ? E : never;

/** What a filter may say about one scalar field (null also matches a missing field). */
export type ValueCondition<V> =
  | V
  | null
  | {
      $eq?: V;
      $ne?: V | null;
      $gt?: NonNullable<V>;
      $gte?: NonNullable<V>;
      $lt?: NonNullable<V>;
      $lte?: NonNullable<V>;
      $in?: readonly (V | null)[];
      $nin?: readonly (V | null)[];
      $exists?: boolean;
      $regex?: V extends string ? string | RegExp : never;
      $options?: V extends string ? string : never;
    };

/** What a filter may say about an array field: conditions apply to its elements. */
export type ArrayCondition<E> = E | { $eq?: E; $ne?: E; $in?: readonly E[]; $nin?: readonly E[]; $exists?: boolean };

export type Condition<V> = NonNullable<V> extends readonly unknown[] ? ArrayCondition<ElementOf<NonNullable<V>>> : ValueCondition<V>;

export type Filter<T> = { [P in Path<T & Doc>]?: Condition<PathValue<T & Doc, P>> } & {
  $and?: readonly Filter<T>[];
  $or?: readonly Filter<T>[];
};

type PathsWhere<T, V> = { [P in Path<T>]: PathValue<T, P> extends V ? P : never }[Path<T>];
type ArrayPaths<T> = { [P in Path<T>]: NonNullable<PathValue<T, P>> extends readonly unknown[] ? P : never }[Path<T>];
/** Fields holding text (or nothing): what `countBy` groups by. */
export type TextPath<T> = PathsWhere<T & Doc, string | null | undefined>;

/**
 * Update operators, applied in MongoDB's order ($setOnInsert first). An update names each field
 * once: one that names a field twice, or a field and another inside it (`$set` of `a` and `$inc`
 * of `a.b`), is refused, as MongoDB refuses it ("would create a conflict").
 */
export interface Update<T> {
  $set?: { [P in Path<T & Doc>]?: PathValue<T & Doc, P> };
  $setOnInsert?: { [P in Path<T>]?: PathValue<T, P> };
  $unset?: { [P in Path<T>]?: '' | true | 1 };
  $inc?: { [P in PathsWhere<T, number | undefined>]?: number };
  $max?: { [P in Path<T>]?: NonNullable<PathValue<T, P>> };
  $min?: { [P in Path<T>]?: NonNullable<PathValue<T, P>> };
  $push?: { [P in ArrayPaths<T>]?: ElementOf<NonNullable<PathValue<T, P>>> };
  /** Removes every element equal to the value. */
  $pull?: { [P in ArrayPaths<T>]?: ElementOf<NonNullable<PathValue<T, P>>> };
  $addToSet?: { [P in ArrayPaths<T>]?: ElementOf<NonNullable<PathValue<T, P>>> | { $each: readonly ElementOf<NonNullable<PathValue<T, P>>>[] } };
}

export type Sort<T> = { [P in Path<T & Doc>]?: 1 | -1 };
export type IndexKeys<T> = { [P in Path<T & Doc>]?: 1 | -1 };

export interface FindOptions<T> {
  sort?: Sort<T>;
  skip?: number;
  /** 0 or absent: no limit. */
  limit?: number;
}

/** The included fields of a projection; `_id` always comes along. */
export type FieldProjection<K extends string> = { readonly [P in K]: 1 };

export interface UpdateResult {
  matchedCount: number;
  modifiedCount: number;
  upsertedId: string | null;
}

export interface IndexSpec<T> {
  keys: IndexKeys<T>;
  unique?: boolean;
}

/**
 * A read model's collection as it is declared next to its projection: its name, which fields
 * hold arrays and the indexes its queries need. Every adapter creates them when the collection
 * is first used; an index that a spec no longer names is dropped.
 */
export interface CollectionSpec<T extends Doc> {
  /** Letters, digits and `_`, starting with a letter or `_`. */
  name: string;
  /** Top-level fields holding arrays (conditions on them match any element; indexes on them are multikey). */
  arrays?: readonly ArrayPaths<T>[];
  indexes?: readonly IndexSpec<T>[];
}

/** Declares a collection with the document type checked against its fields. */
export const collectionSpec = <T extends Doc>(spec: CollectionSpec<T>): CollectionSpec<T> => spec;

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

/**
 * Deferred units of work were lost (see `DocumentStore.transaction`): one failed, or their commit
 * did, and every deferred unit not committed yet was rolled back, as if the process had crashed.
 */
export class DeferredUnitsLostError extends Error {
  constructor(override readonly cause: unknown) {
    super(`deferred units of work rolled back: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'DeferredUnitsLostError';
  }
}

/**
 * Throws when a filter or an update holds `undefined` anywhere (a condition, an operand, an element
 * of `$in`, a value to `$set`). The adapters would disagree about it, and neither answer is what
 * the caller meant: MongoDB's driver (ignoreUndefined) drops the condition, so `{ userId:
 * undefined }` matches every document, everyone's; SQLite matches none. It is a bug where the call
 * is made (a value missing that was meant to be there), so it fails there, loudly, on every adapter.
 */
export function refuseUndefined<V>(what: 'filter' | 'update', value: V): V {
  if (what === 'update' ? operandsHoldUndefined(value) : holdsUndefined(value)) throw undefinedRefused(`a ${what}`, value);
  return value;
}

const undefinedRefused = (what: string, value: unknown) => new Error(`${what} holds undefined at ${pathOfUndefined(value, '') || 'its top'}: say null, leave the field out, or check the value first`);

/** Operands `checkedOnce` checked and froze: an update naming one again is not walked again. */
const checkedOperands = new WeakSet<object>();

/**
 * An operand a projection passes in update after update (the seed of its new documents, as
 * `$setOnInsert`), checked for undefined once, now, and frozen deeply so that it stays as checked:
 * refuseUndefined skips it from then on. Walking a person's or a Castie view's seed again for each
 * event was 2 % of a rebuild's thread. The stores copy what they write, so a frozen operand is
 * never changed.
 */
export function checkedOnce<V extends object>(operand: V): V {
  if (holdsUndefined(operand)) throw undefinedRefused('an update operand', operand);
  checkedOperands.add(deepFreeze(operand));
  return operand;
}

function operandsHoldUndefined(update: unknown): boolean {
  if (typeof update !== 'object' || update === null || Array.isArray(update)) return holdsUndefined(update);
  for (const op in update) {
    const operand = (update as Record<string, unknown>)[op];
    if (typeof operand === 'object' && operand !== null && checkedOperands.has(operand)) continue;
    if (holdsUndefined(operand)) return true;
  }
  return false;
}

function holdsUndefined(value: unknown): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'object' || value === null || value instanceof RegExp) return false;
  if (Array.isArray(value)) {
    for (const element of value) if (holdsUndefined(element)) return true;
    return false;
  }
  for (const key in value) if (holdsUndefined((value as Record<string, unknown>)[key])) return true;
  return false;
}

function pathOfUndefined(value: unknown, path: string): string | null {
  if (value === undefined) return path;
  if (typeof value !== 'object' || value === null || value instanceof RegExp) return null;
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((element, i) => [`${path}[${i}]`, element]) : Object.entries(value).map(([key, v]) => [path ? `${path}.${key}` : key, v]);
  for (const [at, v] of entries) {
    const found = pathOfUndefined(v, at);
    if (found !== null) return found;
  }
  return null;
}

export interface Collection<T extends Doc> {
  readonly name: string;
  /**
   * True for a collection of a unit of work whose writes commit together (SQLite): a projection's
   * batch then commits with its checkpoint, so no event is applied twice and per-document guards
   * (`updateOnce`'s marks) are not needed. False for the store's own collections, and always on
   * MongoDB.
   */
  inAtomicUnit(): boolean;

  /*
   * Documents read are values: an adapter may hand out copies (MongoDB) or share one deeply
   * frozen object between readers until a commit changes it (SQLite's document cache), so a
   * caller never changes a document it read (it would throw), and may key a WeakMap on one.
   */
  findOne(filter: Filter<T>, options?: { sort?: Sort<T> }): Promise<T | null>;
  findOne<K extends Path<T> & keyof T>(filter: Filter<T>, options: { sort?: Sort<T>; projection: FieldProjection<K> }): Promise<Pick<T, K | '_id'> | null>;
  find(filter: Filter<T>, options?: FindOptions<T>): Promise<T[]>;
  find<K extends Path<T> & keyof T>(filter: Filter<T>, options: FindOptions<T> & { projection: FieldProjection<K> }): Promise<Pick<T, K | '_id'>[]>;
  /**
   * The documents with these ids, by id (none for no ids): ids named more than once are fine, and
   * ids without a document are absent. Inside a unit of work it sees the unit's own writes, as
   * find does. No order, which spares an adapter sorting what a caller only joins by id (a feed
   * page looks up some ten lists of hundreds of ids).
   */
  byIds(ids: readonly string[]): Promise<Map<string, T>>;
  countDocuments(filter?: Filter<T>): Promise<number>;
  /**
   * How many matching documents hold each value of a text field, without reading the documents
   * (an index that has the filter's fields and then the field answers it alone). Documents whose
   * field is null or missing count under null, as in MongoDB's `$group`; values no document
   * holds are absent.
   */
  countBy(filter: Filter<T>, field: TextPath<T>): Promise<Map<string | null, number>>;
  insertOne(doc: T): Promise<void>;
  /** Replaces the whole document; with upsert, inserts it when nothing matches. */
  replaceOne(filter: Filter<T>, doc: T, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateOne(filter: Filter<T>, update: Update<T>, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateMany(filter: Filter<T>, update: Update<T>): Promise<UpdateResult>;
  deleteOne(filter: Filter<T>): Promise<number>;
  deleteMany(filter?: Filter<T>): Promise<number>;
}

/**
 * Where collections come from: the store itself, or one unit of work. Code that only reads and
 * writes documents (a projection, a read model's query API) takes this, and works the same
 * inside a unit of work and outside one.
 */
export interface Collections {
  collection<T extends Doc>(spec: CollectionSpec<T>): Collection<T>;
}

/**
 * One unit of work, as `DocumentStore.transaction` hands it to its function. It is named, never
 * ambient: only its own collections work in it, and code that needs it takes it (a store is not
 * one: it has no `atomic`).
 *
 * SQLite (`atomic`): the unit's writes commit together, its reads see its own writes before they
 * commit, and once `fn` returns its collections refuse writes. The store's own collections
 * (`store.collection`) stay outside: in a file, their reads see only what is committed, so a
 * request served while a batch is applied never sees it half done (in memory, where one
 * connection does both, they see the open unit's flushed writes); their writes are units of
 * their own that wait for the open one, so such a write made inside `fn`, or a nested
 * `transaction`, waits for ever.
 *
 * MongoDB (not `atomic`): each write stands alone (`eachWriteAlone`), which projections survive by
 * being idempotent (`updateOnce`).
 */
export interface UnitOfWork extends Collections {
  /** True when the unit's writes commit together or not at all. */
  readonly atomic: boolean;
  /**
   * Runs `fn` as one attempt inside the unit. On an atomic unit, should `fn` throw, every write it
   * made through the unit is undone before the error passes on: the unit goes on as it was before
   * the attempt (a projection that failed partway through an event, then tried again or
   * dead-lettered, leaves nothing of that event behind). Attempts do not nest. Where each write
   * stands alone (MongoDB) the writes made stand, and projections are idempotent per document
   * instead (`updateOnce`).
   */
  attempt<R>(fn: () => Promise<R>): Promise<R>;
}

/**
 * A unit whose every write stands alone, through these collections: what a MongoDB unit is, and
 * how a test applies projections outside any transaction (their `updateOnce` guards then count).
 */
export const eachWriteAlone = (collections: Collections): UnitOfWork => ({ atomic: false, collection: (spec) => collections.collection(spec), attempt: (fn) => fn() });

export interface DocumentStore extends Collections {
  /**
   * Runs `fn` as one unit of work, handed to it (see UnitOfWork): on SQLite every write through
   * the unit's collections commits together or not at all (a projection's batch and its
   * checkpoint); on MongoDB the writes are not atomic together, which projections survive because
   * they are idempotent (`updateOnce`). Units do not nest: `fn` must not begin another, nor write
   * through the store's own collections (on SQLite that write waits for this unit to end).
   *
   * `defer` (a rebuild's batches, between `beginBulkLoad` and `endBulkLoad`): the unit may be
   * committed later, together with the deferred units that follow it, so that a document the
   * batches change again and again is read, written and committed once instead of once per batch.
   * Deferred units become durable together, at the latest when a unit that does not defer begins,
   * at `endBulkLoad`, or at `close` (the adapter may commit sooner, to bound its memory). A crash
   * loses them together with their checkpoints, never one without the other. A deferred unit that
   * fails (or their commit) rolls back every deferred unit not yet committed: the adapter throws
   * `DeferredUnitsLostError`, and from then on throws it for every unit of work and write (reads
   * still answer) until the store is opened again. Whoever deferred them counted them as applied,
   * so nothing may be committed after them: a later checkpoint would skip their events.
   */
  transaction<R>(fn: (unit: UnitOfWork) => Promise<R>, options?: { defer?: boolean }): Promise<R>;
  /**
   * A number that changes whenever a commit may have changed what reads outside a unit of work
   * answer (any collection's writes, a drop, a copy), so that two reads made while it stayed the
   * same read the same state: an answer made from it can be given again as it is. Null where this
   * process cannot know (MongoDB: other processes write the same database), or where reads outside
   * a unit see its writes before it commits (an in-memory SQLite database).
   */
  committedVersion(): number | null;
  /** Drops collections by name, their data and indexes (a projection being rebuilt). */
  drop(names: readonly string[]): Promise<void>;
  /**
   * A rebuild is about to load the named (empty, just dropped) collections: the adapter may write
   * them without their secondary indexes and with large caches until `endBulkLoad`, which builds
   * the indexes in one pass (much cheaper than keeping every index up to date for each write) and
   * returns to the memory of a serving process. Queries meanwhile are answered, without indexes.
   * MongoDB ignores both.
   */
  beginBulkLoad(names: readonly string[]): Promise<void>;
  endBulkLoad(): Promise<void>;
  close(): Promise<void>;
}
