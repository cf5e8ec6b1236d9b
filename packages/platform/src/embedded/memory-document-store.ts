import { randomUUID } from 'node:crypto';
import { Query, update as applyModifier } from 'mingo';
import type { Modifier } from 'mingo/updater';
import { isEqual } from 'mingo/util';
import {
  DuplicateKeyError,
  type Collection,
  type Doc,
  type DocumentStore,
  type Filter,
  type FindOptions,
  type Sort,
  type Update,
  type UpdateResult,
} from '../ports/document-store.ts';

/**
 * The embedded document store: every collection lives in memory, queries and update operators are
 * evaluated by mingo (MongoDB semantics), and `createIndex` builds hash indexes on the first key
 * field so equality and `$in` filters on it touch only their candidates. Documents are cloned on
 * the way in and out, so callers never share state with the store.
 */
export function createMemoryDocumentStore(): DocumentStore {
  const states = new Map<string, CollectionState>();
  const handles = new Map<string, MemoryCollection>();
  return {
    collection<T extends Doc = Doc>(name: string): Collection<T> {
      let handle = handles.get(name);
      if (!handle) {
        const state = new CollectionState(name);
        states.set(name, state);
        handle = new MemoryCollection(state);
        handles.set(name, handle);
      }
      return handle as unknown as Collection<T>;
    },
    async dropAll() {
      // Handles given out earlier stay usable, as a MongoDB collection is recreated on next write;
      // indexes go with the data, as they do in MongoDB.
      for (const state of states.values()) state.reset();
    },
    async close() {},
  };
}

const newId = (): string => randomUUID().replace(/-/g, '');

interface IndexSpec {
  name: string;
  fields: string[];
  /** The key pattern with directions, e.g. `{"handle":1}`: two specs are the same index when equal. */
  pattern: string;
  unique: boolean;
}

/** One collection's documents (by _id, in insertion order) and its indexes. */
class CollectionState {
  readonly docs = new Map<string, Doc>();
  indexes: IndexSpec[] = [];
  /** Hash index per first key field: encoded value -> ids of the documents holding it. */
  readonly lookups = new Map<string, Map<string, Set<string>>>();
  /** Per unique index: encoded compound key -> id of the one document holding it. */
  readonly uniques = new Map<string, Map<string, string>>();

  constructor(readonly name: string) {}

  reset(): void {
    this.docs.clear();
    this.indexes = [];
    this.lookups.clear();
    this.uniques.clear();
  }

  /** Stores `next` (replacing `prev` with the same _id), or throws without changing anything. */
  write(next: Doc, prev: Doc | undefined): void {
    for (const index of this.indexes) {
      if (!index.unique) continue;
      const owners = this.uniques.get(index.name)!;
      for (const key of compoundKeys(next, index.fields)) {
        const owner = owners.get(key);
        if (owner !== undefined && owner !== next._id) throw new DuplicateKeyError(this.name, index.name);
      }
    }
    if (prev) this.unindex(prev);
    this.docs.set(next._id, next);
    this.index(next);
  }

  remove(doc: Doc): void {
    this.unindex(doc);
    this.docs.delete(doc._id);
  }

  private index(doc: Doc): void {
    for (const [field, buckets] of this.lookups) {
      for (const key of keysAt(doc, field)) {
        let ids = buckets.get(key);
        if (!ids) buckets.set(key, (ids = new Set()));
        ids.add(doc._id);
      }
    }
    for (const index of this.indexes) {
      if (!index.unique) continue;
      const owners = this.uniques.get(index.name)!;
      for (const key of compoundKeys(doc, index.fields)) owners.set(key, doc._id);
    }
  }

  private unindex(doc: Doc): void {
    for (const [field, buckets] of this.lookups) {
      for (const key of keysAt(doc, field)) {
        const ids = buckets.get(key);
        ids?.delete(doc._id);
        if (ids?.size === 0) buckets.delete(key);
      }
    }
    for (const index of this.indexes) {
      if (!index.unique) continue;
      const owners = this.uniques.get(index.name)!;
      for (const key of compoundKeys(doc, index.fields)) {
        if (owners.get(key) === doc._id) owners.delete(key);
      }
    }
  }

  addIndex(spec: IndexSpec): void {
    if (spec.unique) {
      const owners = new Map<string, string>();
      for (const doc of this.docs.values()) {
        for (const key of compoundKeys(doc, spec.fields)) {
          const owner = owners.get(key);
          if (owner !== undefined && owner !== doc._id) throw new DuplicateKeyError(this.name, spec.name);
          owners.set(key, doc._id);
        }
      }
      this.uniques.set(spec.name, owners);
    }
    this.indexes.push(spec);
    const field = spec.fields[0]!;
    // _id is answered by the primary map already.
    if (field === '_id' || this.lookups.has(field)) return;
    const buckets = new Map<string, Set<string>>();
    for (const doc of this.docs.values()) {
      for (const key of keysAt(doc, field)) {
        let ids = buckets.get(key);
        if (!ids) buckets.set(key, (ids = new Set()));
        ids.add(doc._id);
      }
    }
    this.lookups.set(field, buckets);
  }

  /**
   * The ids that can match the filter, from the _id map and the hash indexes, or null when no
   * index applies and every document must be tested. Always a superset of the true matches (the
   * matcher tests every condition), so of the conditions that must all hold only the one with the
   * fewest candidates is materialized: a page asking for one day of Casties in any of 45 groups
   * reads the day's hundred, not the groups' thousands.
   */
  candidates(filter: Filter): Set<string> | null {
    return this.plan(filter)?.make() ?? null;
  }

  private plan(filter: Filter): Plan | null {
    let best: Plan | null = null;
    const consider = (plan: Plan | null) => {
      if (plan && (!best || plan.size < best.size)) best = plan;
    };
    for (const [field, condition] of Object.entries(filter)) {
      if (field === '$and' && Array.isArray(condition)) {
        for (const sub of condition as Filter[]) consider(this.plan(sub));
      } else if (field === '$or' && Array.isArray(condition)) {
        const branches = (condition as Filter[]).map((sub) => this.plan(sub));
        if (branches.every((b) => b !== null)) {
          const plans = branches as Plan[];
          consider({ size: plans.reduce((n, b) => n + b.size, 0), make: () => union(plans.map((b) => b.make())) });
        }
      } else if (field === '_id') {
        const values = equalityValues(condition);
        if (values) consider({ size: values.length, make: () => new Set(values.filter((v): v is string => typeof v === 'string' && this.docs.has(v))) });
      } else {
        const buckets = this.lookups.get(field);
        const values = buckets && equalityValues(condition);
        if (buckets && values) {
          const hits = values.map((v) => buckets.get(encode(v)) ?? EMPTY_SET);
          consider({ size: hits.reduce((n, h) => n + h.size, 0), make: () => union(hits) });
        }
      }
    }
    return best;
  }
}

/** Candidates of a filter: how many (an upper bound) and how to list them. */
interface Plan {
  size: number;
  make: () => Set<string>;
}

class MemoryCollection implements Collection<Doc> {
  constructor(private readonly state: CollectionState) {}

  get name(): string {
    return this.state.name;
  }

  async createIndex(keys: Record<string, 1 | -1>, options: { unique?: boolean; name?: string } = {}): Promise<void> {
    const fields = Object.keys(keys);
    if (fields.length === 0) throw new Error('createIndex needs at least one key');
    const name = options.name ?? fields.map((f) => `${f}_${keys[f]}`).join('_');
    const unique = options.unique ?? false;
    const pattern = JSON.stringify(keys);
    const existing = this.state.indexes.find((i) => i.name === name || i.pattern === pattern);
    if (existing) {
      // As in MongoDB: the same index again is a no-op, a clash in name or options is an error.
      if (existing.name !== name || existing.unique !== unique || existing.pattern !== pattern) {
        throw new Error(`index ${existing.name} already exists on ${this.state.name} with different options`);
      }
      return;
    }
    this.state.addIndex({ name, fields, pattern, unique });
  }

  async findOne(filter: Filter, options: Pick<FindOptions, 'projection' | 'sort'> = {}): Promise<Doc | null> {
    return (await this.find(filter, { ...options, limit: 1 }))[0] ?? null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<Doc[]> {
    const skip = Math.max(0, options.skip ?? 0);
    // limit 0 means "no limit" in MongoDB.
    const limit = options.limit ? Math.abs(options.limit) : undefined;
    const end = limit === undefined ? undefined : skip + limit;
    let docs: Doc[];
    if (options.sort && Object.keys(options.sort).length > 0) {
      docs = sortDocs(this.matching(filter), options.sort, end).slice(skip, end);
    } else {
      docs = this.matching(filter, end).slice(skip);
    }
    const { projection } = options;
    return docs.map((doc) => structuredClone(projection ? project(doc, projection) : doc));
  }

  async countDocuments(filter: Filter = {}): Promise<number> {
    return isEmpty(filter) ? this.state.docs.size : this.matching(filter).length;
  }

  async insertOne(doc: Doc): Promise<void> {
    const stored = structuredClone(doc);
    if (stored._id === undefined) stored._id = newId();
    this.insert(stored);
  }

  async replaceOne(filter: Filter, doc: Doc, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    const [match] = this.matching(filter, 1);
    const { _id: replacementId, ...fields } = structuredClone(doc);
    if (match) {
      if (replacementId !== undefined && replacementId !== match._id) throw immutableIdError();
      const next: Doc = { _id: match._id, ...fields };
      const modified = !isEqual(next, match);
      if (modified) this.state.write(next, match);
      return { matchedCount: 1, modifiedCount: modified ? 1 : 0, upsertedId: null };
    }
    if (!options.upsert) return { matchedCount: 0, modifiedCount: 0, upsertedId: null };
    const filterId = equalityFields(filter)._id;
    if (filterId !== undefined && replacementId !== undefined && filterId !== replacementId) throw immutableIdError();
    const _id = (filterId ?? replacementId ?? newId()) as string;
    this.insert({ _id, ...fields });
    return { matchedCount: 0, modifiedCount: 0, upsertedId: _id };
  }

  async updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    const [match] = this.matching(filter, 1);
    if (match) {
      const modified = this.apply(match, filter, update);
      return { matchedCount: 1, modifiedCount: modified ? 1 : 0, upsertedId: null };
    }
    if (!options.upsert) return { matchedCount: 0, modifiedCount: 0, upsertedId: null };
    return { matchedCount: 0, modifiedCount: 0, upsertedId: this.upsert(filter, update) };
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    const matches = this.matching(filter);
    let modifiedCount = 0;
    // Like MongoDB, not atomic across documents: a duplicate key stops the run part way.
    for (const match of matches) if (this.apply(match, filter, update)) modifiedCount++;
    return { matchedCount: matches.length, modifiedCount, upsertedId: null };
  }

  async deleteOne(filter: Filter): Promise<number> {
    const [match] = this.matching(filter, 1);
    if (match) this.state.remove(match);
    return match ? 1 : 0;
  }

  async deleteMany(filter: Filter = {}): Promise<number> {
    const matches = this.matching(filter);
    for (const doc of matches) this.state.remove(doc);
    return matches.length;
  }

  /** Stored documents matching the filter (not copies), at most `max`, in index or natural order. */
  private matching(filter: Filter, max = Infinity): Doc[] {
    const { docs } = this.state;
    const ids = this.state.candidates(filter);
    if (ids?.size === 0) return [];
    const test = isEmpty(filter) ? null : (compileFilter(filter) ?? ((q) => (doc: Doc) => q.test(doc))(new Query(filter)));
    const out: Doc[] = [];
    const consider = (doc: Doc | undefined): boolean => {
      if (doc && (!test || test(doc))) out.push(doc);
      return out.length < max;
    };
    if (ids) {
      for (const id of ids) if (!consider(docs.get(id))) break;
    } else {
      for (const doc of docs.values()) if (!consider(doc)) break;
    }
    return out;
  }

  private insert(doc: Doc): void {
    if (this.state.docs.has(doc._id)) throw new DuplicateKeyError(this.state.name, '_id_');
    this.state.write(doc, undefined);
  }

  /** Applies the update to a copy of `match` and stores it when it changed; true when it did. */
  private apply(match: Doc, filter: Filter, update: Update): boolean {
    const next = structuredClone(match);
    const { $setOnInsert: _ignored, ...modifier } = update;
    if (!modify(next, modifier, filter)) return false;
    this.state.write(next, match);
    return true;
  }

  /** MongoDB's upsert: the filter's equality fields, then $setOnInsert and the other operators. */
  private upsert(filter: Filter, update: Update): string {
    const { $setOnInsert, $set, ...rest } = update;
    const sets: Record<string, unknown> = { ...$setOnInsert, ...$set };
    const { _id: filterId, ...seed } = equalityFields(filter);
    const { _id: setId, ...assignments } = sets;
    const _id = (filterId ?? setId ?? newId()) as string;
    const doc: Doc = { _id };
    for (const [path, value] of Object.entries(seed)) setPath(doc, path, structuredClone(value));
    modify(doc, { ...rest, $set: assignments }, {});
    this.insert(doc);
    return _id;
  }
}

/** Runs mingo's update operators on `doc` in place; true when a field changed. */
function modify(doc: Doc, modifier: Omit<Update, '$setOnInsert'>, filter: Filter): boolean {
  const { $set } = modifier;
  if ($set && '_id' in $set) {
    // Setting _id to its own value is allowed in MongoDB; anything else is not.
    if ($set._id !== doc._id) throw immutableIdError();
    const { _id: _same, ...others } = $set;
    modifier = { ...modifier, $set: others };
  }
  const operators = Object.fromEntries(Object.entries(modifier).filter(([, v]) => v && Object.keys(v).length > 0));
  if (Object.keys(operators).length === 0) return false;
  // Projections apply simple operators thousands of times a second; mingo's general updater costs
  // ~80 µs a call, the fast path a few. Anything it does not cover goes to mingo.
  const fast = fastModify(doc, operators);
  if (fast !== null) return fast;
  // The filter is needed only by the positional `$` operator; mingo re-tests it, so skip it otherwise.
  const positional = Object.values(operators).some((expr) => Object.keys(expr).some((p) => /\.\$(\.|$)/.test(p)));
  const changed = applyModifier(doc, operators as Modifier<Doc>, undefined, positional ? filter : undefined, { cloneMode: 'deep' });
  return changed.length > 0;
}

const immutableIdError = (): Error => new Error("the update would modify the immutable field '_id'");

// ---- a compiled matcher for simple filters ------------------------------------------------------

type Matcher = (doc: Doc) => boolean;
const COMPARISONS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists']);
const isScalar = (v: unknown): v is string | number | boolean | null => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** Values a path reaches, MongoDB style (arrays fan out; missing is undefined). */
function leaves(doc: Doc, parts: readonly string[]): unknown[] {
  const out: unknown[] = [];
  walkPath(doc, parts, 0, (leaf) => out.push(leaf));
  return out;
}

const equals = (leaf: unknown, value: string | number | boolean | null): boolean => (value === null ? leaf === null || leaf === undefined : leaf === value);
/** MongoDB compares only values of the same type. */
const compares = (leaf: unknown, value: string | number, op: string): boolean => {
  if (typeof leaf !== typeof value) return false;
  const l = leaf as string | number;
  return op === '$gt' ? l > value : op === '$gte' ? l >= value : op === '$lt' ? l < value : l <= value;
};

function compileCondition(parts: readonly string[], condition: unknown): Matcher | null {
  if (isScalar(condition)) return (doc) => leaves(doc, parts).some((l) => equals(l, condition));
  if (!isOperatorObject(condition)) return null;
  const tests: ((ls: unknown[]) => boolean)[] = [];
  for (const [op, value] of Object.entries(condition)) {
    if (!COMPARISONS.has(op)) return null;
    if (op === '$in' || op === '$nin') {
      if (!Array.isArray(value) || !value.every(isScalar)) return null;
      const hit = (ls: unknown[]) => ls.some((l) => value.some((v) => equals(l, v)));
      tests.push(op === '$in' ? hit : (ls) => !hit(ls));
    } else if (op === '$exists') {
      if (typeof value !== 'boolean') return null;
      tests.push((ls) => ls.some((l) => l !== undefined) === value);
    } else if (op === '$eq' || op === '$ne') {
      if (!isScalar(value)) return null;
      tests.push(op === '$eq' ? (ls) => ls.some((l) => equals(l, value)) : (ls) => !ls.some((l) => equals(l, value)));
    } else {
      if (typeof value !== 'string' && typeof value !== 'number') return null;
      tests.push((ls) => ls.some((l) => compares(l, value, op)));
    }
  }
  return (doc) => {
    const ls = leaves(doc, parts);
    return tests.every((t) => t(ls));
  };
}

/**
 * A matcher for the filters read models use every moment (equality, comparisons, $in, $nin,
 * $exists, $and, $or on plain paths), with MongoDB's semantics for arrays and missing fields;
 * null when the filter needs mingo (regex, $elemMatch, whole-array or object equality, …).
 */
function compileFilter(filter: Filter): Matcher | null {
  const tests: Matcher[] = [];
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$and' || field === '$or') {
      if (!Array.isArray(condition) || condition.length === 0) return null;
      const subs = condition.map((sub) => (isPlainObject(sub) ? compileFilter(sub) : null));
      if (subs.some((m) => m === null)) return null;
      const ms = subs as Matcher[];
      tests.push(field === '$and' ? (doc) => ms.every((m) => m(doc)) : (doc) => ms.some((m) => m(doc)));
      continue;
    }
    if (field.startsWith('$') || field.split('.').some((p) => p === '' || p.startsWith('$'))) return null;
    const m = compileCondition(field.split('.'), condition);
    if (!m) return null;
    tests.push(m);
  }
  return (doc) => tests.every((t) => t(doc));
}

type Primitive = string | number | boolean | null;
const isPrimitive = (v: unknown): v is Primitive => v === null || ['string', 'number', 'boolean'].includes(typeof v);
/**
 * A path the fast path can walk: no positional or other `$` part, no empty part. A numeric part is
 * a plain key while its parent is an object (an array on the way sends the update to mingo).
 */
const simplePath = (path: string): boolean => !path.includes('$') && !path.split('.').includes('');

/** The parent object of a path's last field (created when `create`), or null when an array or a value is in the way. */
function parentOf(doc: Record<string, unknown>, parts: readonly string[], create: boolean): Record<string, unknown> | null {
  let node = doc;
  for (const part of parts.slice(0, -1)) {
    const child = node[part];
    if (child === undefined && create) node = node[part] = {};
    else if (isPlainObject(child)) node = child;
    else return null;
  }
  return node;
}

/**
 * $set, $unset, $inc, $max, $min, $addToSet, $push and $pull of primitive values on plain paths,
 * with MongoDB's semantics; returns whether the document changed, or null (the document untouched)
 * when any part needs mingo.
 */
function fastModify(doc: Doc, operators: Record<string, Record<string, unknown>>): boolean | null {
  const known = new Set(['$set', '$unset', '$inc', '$max', '$min', '$addToSet', '$push', '$pull']);
  // Check everything first, so a fallback never sees a half-modified document. Paths that
  // overlap (`list` and `list.0`) conflict in MongoDB: mingo refuses them the same way.
  const all = Object.values(operators).flatMap((fields) => Object.keys(fields));
  if (all.some((a, i) => all.some((b, j) => i !== j && (a === b || b.startsWith(`${a}.`))))) return null;
  for (const [op, fields] of Object.entries(operators)) {
    if (!known.has(op)) return null;
    for (const [path, value] of Object.entries(fields)) {
      if (!simplePath(path)) return null;
      const parts = path.split('.');
      const parent = parentOf(doc, parts, false);
      const current = parent?.[parts.at(-1)!];
      if (parent === null && parts.length > 1) {
        // A missing intermediate object is created; anything else (an array, a value) needs mingo.
        let node: unknown = doc;
        for (const part of parts.slice(0, -1)) {
          if (node === undefined) break;
          if (!isPlainObject(node)) return null;
          node = node[part];
        }
        if (node !== undefined && !isPlainObject(node)) return null;
      }
      switch (op) {
        case '$inc':
          if (typeof value !== 'number' || (current !== undefined && typeof current !== 'number')) return null;
          break;
        case '$max':
        case '$min':
          if (!(typeof value === 'number' || typeof value === 'string') || (current !== undefined && current !== null && typeof current !== typeof value)) return null;
          break;
        case '$addToSet':
        case '$push':
        case '$pull':
          if (!isPrimitive(value) || (current !== undefined && !Array.isArray(current))) return null;
          if (Array.isArray(current) && !current.every(isPrimitive)) return null;
          break;
      }
    }
  }
  let changed = false;
  for (const [op, fields] of Object.entries(operators)) {
    for (const [path, value] of Object.entries(fields)) {
      const parts = path.split('.');
      const field = parts.at(-1)!;
      const parent = parentOf(doc, parts, op !== '$unset' && op !== '$pull')!;
      if (!parent) continue;
      const current = parent[field];
      switch (op) {
        case '$set':
          if (!isEqual(current, value)) {
            parent[field] = structuredClone(value);
            changed = true;
          }
          break;
        case '$unset':
          if (field in parent) {
            delete parent[field];
            changed = true;
          }
          break;
        case '$inc':
          parent[field] = ((current as number | undefined) ?? 0) + (value as number);
          changed ||= value !== 0 || current === undefined;
          break;
        case '$max':
        case '$min':
          // BSON order puts null below numbers and strings: $max replaces it, $min keeps it.
          if (current === undefined || (current === null ? op === '$max' : op === '$max' ? (value as number) > (current as number) : (value as number) < (current as number))) {
            parent[field] = value;
            changed = true;
          }
          break;
        case '$addToSet': {
          const list = (current as Primitive[] | undefined) ?? (parent[field] = []);
          if (!list.includes(value as Primitive)) {
            (parent[field] as Primitive[]).push(value as Primitive);
            changed = true;
          } else if (current === undefined) changed = true;
          break;
        }
        case '$push':
          if (current === undefined) parent[field] = [value];
          else (current as Primitive[]).push(value as Primitive);
          changed = true;
          break;
        case '$pull':
          if (Array.isArray(current) && current.includes(value as Primitive)) {
            parent[field] = current.filter((x) => x !== value);
            changed = true;
          }
          break;
      }
    }
  }
  return changed;
}

// ---- index keys -------------------------------------------------------------------------------

const EMPTY_SET: ReadonlySet<string> = new Set();
/** Marks an empty array at the end of a path: indexed and sorted apart from null, as in MongoDB. */
const EMPTY_ARRAY = Symbol('empty array');

/**
 * Calls `visit` with every value the dotted path reaches, MongoDB style: arrays along the path fan
 * out over their elements, an array at the end yields its elements, a missing field yields undefined.
 */
function walkPath(value: unknown, parts: readonly string[], i: number, visit: (leaf: unknown) => void): void {
  if (i === parts.length) {
    if (!Array.isArray(value)) return visit(value);
    if (value.length === 0) return visit(EMPTY_ARRAY);
    for (const element of value) visit(element);
    return;
  }
  const part = parts[i]!;
  if (Array.isArray(value)) {
    if (value.length === 0) return visit(undefined);
    if (/^\d+$/.test(part)) walkPath(value[Number(part)], parts, i + 1, visit);
    for (const element of value) if (isPlainObject(element)) walkPath(element, parts, i, visit);
    return;
  }
  walkPath(isPlainObject(value) ? value[part] : undefined, parts, i + 1, visit);
}

/** Index keys of a document for one field: the encoded values the field path reaches. */
function keysAt(doc: Doc, field: string): Set<string> {
  const keys = new Set<string>();
  walkPath(doc, field.split('.'), 0, (leaf) => keys.add(encode(leaf)));
  return keys;
}

/** Keys of a compound index: one per combination of the fields' keys (multikey indexes). */
function compoundKeys(doc: Doc, fields: readonly string[]): string[] {
  let keys = [''];
  for (const field of fields) {
    const next: string[] = [];
    for (const prefix of keys) for (const key of keysAt(doc, field)) next.push(`${prefix}\u0000${key}`);
    keys = next;
  }
  return keys;
}

/** A string that is equal for two values exactly when MongoDB's equality holds (for index use). */
function encode(value: unknown): string {
  if (value === null || value === undefined) return 'z';
  if (value === EMPTY_ARRAY) return 'u';
  switch (typeof value) {
    case 'number':
    case 'bigint':
      return `n${value}`;
    case 'string':
      return `s${value}`;
    case 'boolean':
      return value ? 'bt' : 'bf';
  }
  if (value instanceof Date) return `d${value.getTime()}`;
  if (value instanceof RegExp) return `r${value}`;
  return `o${JSON.stringify(value)}`;
}

const isIndexable = (v: unknown): boolean =>
  v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof Date;

/** The values an equality or `$in` condition accepts, when all are indexable; otherwise null. */
function equalityValues(condition: unknown): unknown[] | null {
  if (isIndexable(condition)) return [condition];
  if (!isOperatorObject(condition)) return null;
  if ('$eq' in condition) return isIndexable(condition.$eq) ? [condition.$eq] : null;
  const values = condition.$in;
  if (Array.isArray(values) && values.every(isIndexable)) return values;
  return null;
}

function union(sets: ReadonlyArray<ReadonlySet<string>>): Set<string> {
  if (sets.length === 1) return sets[0] as Set<string>;
  const out = new Set<string>();
  for (const set of sets) for (const id of set) out.add(id);
  return out;
}

// ---- sort -------------------------------------------------------------------------------------

/**
 * Sorts by the spec, MongoDB style (arrays sort by their least element ascending and greatest
 * descending; values of different types in BSON order). With `keep`, only the first `keep` are
 * needed, so a bounded insertion keeps them instead of sorting everything.
 */
function sortDocs(docs: Doc[], sort: Sort, keep?: number): Doc[] {
  const fields = Object.entries(sort).map(([field, dir]) => ({ parts: field.split('.'), dir }));
  type Row = { doc: Doc; keys: unknown[] };
  const row = (doc: Doc): Row => ({ doc, keys: fields.map((f) => sortKey(doc, f.parts, f.dir)) });
  const cmp = (a: Row, b: Row): number => {
    for (let i = 0; i < fields.length; i++) {
      const c = compareValues(a.keys[i], b.keys[i]);
      if (c !== 0) return c * fields[i]!.dir;
    }
    return 0;
  };
  if (keep === undefined || keep * 8 > docs.length) return docs.map(row).sort(cmp).map((r) => r.doc);
  const [first] = fields;
  const top: Row[] = [];
  for (const doc of docs) {
    // Most documents lose on the first key alone: reject them before building a row.
    if (top.length === keep && compareValues(sortKey(doc, first!.parts, first!.dir), top[keep - 1]!.keys[0]) * first!.dir > 0) continue;
    const candidate = row(doc);
    if (top.length === keep && cmp(candidate, top[keep - 1]!) >= 0) continue;
    // Insert after equal rows so that ties keep their order, like the stable sort above.
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(top[mid]!, candidate) <= 0) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, candidate);
    if (top.length > keep) top.pop();
  }
  return top.map((r) => r.doc);
}

function sortKey(doc: Doc, parts: readonly string[], dir: 1 | -1): unknown {
  // Fast path: a path without arrays is a plain property walk.
  let value: unknown = doc;
  for (const part of parts) {
    value = isPlainObject(value) ? value[part] : undefined;
    if (Array.isArray(value)) return arraySortKey(doc, parts, dir);
  }
  return value;
}

function arraySortKey(doc: Doc, parts: readonly string[], dir: 1 | -1): unknown {
  let key: unknown;
  let first = true;
  walkPath(doc, parts, 0, (leaf) => {
    if (first || compareValues(leaf, key) * dir < 0) key = leaf;
    first = false;
  });
  return key;
}

/** BSON type order: (empty array) < null/missing < numbers < strings < objects < arrays < booleans < dates < regexes. */
function typeRank(v: unknown): number {
  if (v === EMPTY_ARRAY) return 0;
  if (v === null || v === undefined) return 1;
  switch (typeof v) {
    case 'number':
    case 'bigint':
      return 2;
    case 'string':
      return 3;
    case 'boolean':
      return 8;
  }
  if (Array.isArray(v)) return 5;
  if (v instanceof Date) return 9;
  if (v instanceof RegExp) return 11;
  return 4;
}

function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 2:
    case 3:
    case 8:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 9:
      return (a as Date).getTime() - (b as Date).getTime();
    case 11:
      return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
    case 5: {
      const [x, y] = [a as unknown[], b as unknown[]];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
    case 4: {
      const [x, y] = [Object.entries(a as object), Object.entries(b as object)];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const [[ka, va], [kb, vb]] = [x[i]!, y[i]!];
        const c = compareValues(va, vb) || (ka < kb ? -1 : ka > kb ? 1 : 0);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
  }
  return 0;
}

// ---- projection and filters -------------------------------------------------------------------

type ProjectionTree = { [field: string]: ProjectionTree | true };

/** Keeps the projected fields (and _id); dotted paths reach into subdocuments and arrays of them. */
function project(doc: Doc, projection: Record<string, 1>): Doc {
  const tree: ProjectionTree = { _id: true };
  for (const path of Object.keys(projection)) {
    const parts = path.split('.');
    let node = tree;
    for (const [i, part] of parts.entries()) {
      if (i === parts.length - 1) node[part] = true;
      else {
        const child = node[part];
        if (child === true) break;
        node = node[part] = child ?? {};
      }
    }
  }
  return projectObject(doc, tree) as Doc;
}

function projectObject(value: Record<string, unknown>, tree: ProjectionTree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, sub] of Object.entries(tree)) {
    if (!Object.hasOwn(value, field)) continue;
    const v = value[field];
    if (sub === true) out[field] = v;
    else if (Array.isArray(v)) out[field] = projectArray(v, sub);
    else if (isPlainObject(v)) out[field] = projectObject(v, sub);
  }
  return out;
}

function projectArray(values: unknown[], tree: ProjectionTree): unknown[] {
  return values.flatMap((v): unknown[] => (Array.isArray(v) ? [projectArray(v, tree)] : isPlainObject(v) ? [projectObject(v, tree)] : []));
}

/** The fields an upsert copies from the filter: plain equalities and `$eq`, also inside `$and`. */
function equalityFields(filter: Filter, out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(condition)) {
      for (const sub of condition) equalityFields(sub as Filter, out);
    } else if (field.startsWith('$') || condition instanceof RegExp) {
      continue;
    } else if (isOperatorObject(condition)) {
      if ('$eq' in condition) out[field] = condition.$eq;
    } else {
      out[field] = condition;
    }
  }
  return out;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const child = node[part];
    node = isPlainObject(child) ? child : (node[part] = {});
  }
  node[parts[parts.length - 1]!] = value;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function isOperatorObject(v: unknown): v is Record<string, unknown> {
  if (!isPlainObject(v)) return false;
  const keys = Object.keys(v);
  return keys.length > 0 && keys.every((k) => k.startsWith('$'));
}

const isEmpty = (filter: Filter): boolean => Object.keys(filter).length === 0;
