/**
 * Pure operations on documents as plain JSON values: dotted paths, copies, equality, the update
 * operators of the document store port, and a matcher for filters. The SQLite adapter evaluates
 * queries in SQL; it uses these where it already holds the document (a unit of work's cache, an
 * upsert), and the conformance suite checks that both give the same answers.
 */

export type JsonObject = Record<string, unknown>;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A deep copy of a JSON value (much cheaper than structuredClone for small documents). */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  const out: JsonObject = {};
  for (const key in value) out[key] = cloneJson((value as JsonObject)[key]);
  return out as T;
}

/** Deep equality of JSON values; object keys compare in order, as MongoDB compares documents. */
export function equalJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => equalJson(x, bb[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && equalJson((a as JsonObject)[k], (b as JsonObject)[k]));
}

export const splitPath = (path: string): string[] => path.split('.');

/**
 * A field of an object, never one it inherits: a document may have a field named `constructor` or
 * `toString` (a record keyed by what users type), and a document without one has no such field.
 */
const own = (object: JsonObject, key: string): unknown => (Object.hasOwn(object, key) ? object[key] : undefined);

/** The value at a dotted path (through objects only), or undefined when missing. */
export function getPath(doc: JsonObject, path: string): unknown {
  if (!path.includes('.')) return own(doc, path);
  let at: unknown = doc;
  for (const key of splitPath(path)) {
    if (!isObject(at)) return undefined;
    at = own(at, key);
  }
  return at;
}

/**
 * Where a write at `path` goes. A frozen object along the way (shared with the store's cache: a
 * document a unit of work took from it is copied at its top level only, see `writableCopy`) is
 * copied first, and the copy takes its place: copy on write.
 */
function parentOf(doc: JsonObject, path: string, create: boolean): { parent: JsonObject; key: string } | null {
  // Most paths name a top-level field: no split (splitting every path was 3 % of a rebuild's thread).
  if (!path.includes('.')) {
    if (path === PROTO) throw protoRefused(path);
    return { parent: doc, key: path };
  }
  const keys = splitPath(path);
  // Through __proto__ a write would reach Object.prototype, and every object of the process.
  if (keys.includes(PROTO)) throw protoRefused(path);
  let at: JsonObject = doc;
  for (let i = 0; i < keys.length - 1; i++) {
    let next = own(at, keys[i]!);
    if (isObject(next) && Object.isFrozen(next)) next = at[keys[i]!] = { ...next };
    if (isObject(next)) at = next;
    else if (next === undefined && create) at = at[keys[i]!] = {};
    else if (create) throw new Error(`cannot create field ${path}: ${keys.slice(0, i + 1).join('.')} is not an object`);
    else return null;
  }
  return { parent: at, key: keys[keys.length - 1]! };
}

const PROTO = '__proto__';
export const protoRefused = (path: string) => new Error(`the field path ${path} names __proto__, which no document field may be`);

export function setPath(doc: JsonObject, path: string, value: unknown): void {
  const { parent, key } = parentOf(doc, path, true)!;
  parent[key] = value;
}

export function unsetPath(doc: JsonObject, path: string): void {
  const found = parentOf(doc, path, false);
  if (found) delete found.parent[found.key];
}

/** Orders two scalars of one type; null when they are of different types (MongoDB's brackets). */
export function compareScalars(a: unknown, b: unknown): number | null {
  if (typeof a !== typeof b || a === null || b === null || typeof a === 'object') return null;
  return (a as string | number | boolean) < (b as string | number | boolean) ? -1 : (a as string | number | boolean) > (b as string | number | boolean) ? 1 : 0;
}

type Operators = Partial<Record<'$set' | '$unset' | '$inc' | '$max' | '$min' | '$push' | '$pull' | '$addToSet' | '$setOnInsert', JsonObject>>;

const SUPPORTED = new Set(['$set', '$unset', '$inc', '$max', '$min', '$push', '$pull', '$addToSet', '$setOnInsert']);

const isSet = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null;

/**
 * Where an update reads and writes a path, found once per path: the object holding its last key,
 * when every object on the way is there, writable (not frozen) and not `__proto__`; else null,
 * and the path is read and written from the top each time (getPath, setPath: they create what is
 * missing and copy what is frozen). A rebuild's updates name fields of documents it holds, whose
 * paths are all there: walking each path three times (its undo, its value, its write) was a tenth
 * of the Castie views' rebuild.
 */
interface Slot {
  container: JsonObject;
  key: string;
}

function slotOf(doc: JsonObject, path: string): Slot | null {
  let container = doc;
  for (let start = 0; ; ) {
    const dot = path.indexOf('.', start);
    const key = dot < 0 ? (start === 0 ? path : path.slice(start)) : path.slice(start, dot);
    if (key === PROTO) return null;
    if (dot < 0) return { container, key };
    const next = own(container, key);
    if (!isObject(next) || Object.isFrozen(next)) return null;
    container = next;
    start = dot + 1;
  }
}

const valueAt = (doc: JsonObject, path: string, slot: Slot | null): unknown => (slot ? own(slot.container, slot.key) : getPath(doc, path));

function put(doc: JsonObject, path: string, slot: Slot | null, value: unknown): void {
  if (slot) slot.container[slot.key] = value;
  else setPath(doc, path, value);
}

/** Sets a path to a value unless it holds an equal one; true when it changed. */
function setChanged(doc: JsonObject, path: string, slot: Slot | null, value: unknown): boolean {
  if (equalJson(valueAt(doc, path, slot), value)) return false;
  put(doc, path, slot, cloneJson(value));
  return true;
}

/** The array at a path, created empty when missing; null (created) tells the caller it changed. */
function arrayAt(doc: JsonObject, path: string, slot: Slot | null): { list: unknown[]; created: boolean } {
  const now = valueAt(doc, path, slot);
  if (now === undefined) {
    const list: unknown[] = [];
    put(doc, path, slot, list);
    return { list, created: true };
  }
  if (!Array.isArray(now)) throw new Error(`the field ${path} is not an array`);
  if (!Object.isFrozen(now)) return { list: now, created: false };
  // Shared with the cache: appended to as a copy (see parentOf).
  const list = [...now];
  put(doc, path, slot, list);
  return { list, created: false };
}

/**
 * A document to change, from the store's cache (deeply frozen, shared with every reader):
 * its top level copied, and whatever below it a write reaches copied then (parentOf, arrayAt).
 * Copying every document whole as a unit took it was 2 % of the server's time under a load of
 * forecasts (a Castie's view, its counts and options, for one counter). Anything not frozen is
 * copied whole.
 */
export function writableCopy(doc: JsonObject): JsonObject {
  return Object.isFrozen(doc) ? { ...doc } : cloneJson(doc);
}

/**
 * Applies one operator's fields, keeping in `undo` (when given) how to put back each path it
 * is about to change; true when anything changed.
 */
function applyOperator(doc: JsonObject, op: Operator, fields: JsonObject, undo: Undo[] | null, note: Note): boolean {
  let changed = false;
  const appends = op === '$push' || op === '$addToSet';
  const unsets = op === '$unset';
  let first: string | null = null;
  for (const path in fields) {
    if (path === '_id') throw new Error('the _id of a document cannot change');
    if (note === Note.Each) notePath(op, path);
    else if (note === Note.Later) {
      // The first path alone cannot conflict: noted once a second one comes.
      if (first === null) first = path;
      else {
        if (named.count === 0) notePath(op, first);
        notePath(op, path);
      }
    }
    const value = fields[path];
    const slot = slotOf(doc, path);
    // Before anything at the path changes: its undo (see applyUpdateOrNothing).
    if (undo) undo.push(slot ? undoAt(slot, appends, unsets) : undoOf(doc, path, appends, unsets));
    switch (op) {
      case '$set':
      case '$setOnInsert':
        if (setChanged(doc, path, slot, value)) changed = true;
        break;
      case '$unset':
        if (valueAt(doc, path, slot) !== undefined) {
          if (slot) delete slot.container[slot.key];
          else unsetPath(doc, path);
          changed = true;
        }
        break;
      case '$inc': {
        const now = valueAt(doc, path, slot);
        if (now !== undefined && typeof now !== 'number') throw new Error(`cannot $inc the non-number field ${path}`);
        const next = ((now as number | undefined) ?? 0) + (value as number);
        // A number is its own copy and equal only to itself (a rebuild's counters: most updates).
        if (next === now && now !== undefined) break;
        put(doc, path, slot, next);
        changed = true;
        break;
      }
      case '$max':
      case '$min': {
        const now = valueAt(doc, path, slot);
        const order = compareScalars(value, now);
        if (now !== undefined && now !== null && (order === null || order * (op === '$max' ? 1 : -1) <= 0)) break;
        if (typeof value === 'object' && value !== null) {
          if (setChanged(doc, path, slot, value)) changed = true;
        } else if (value !== now) {
          put(doc, path, slot, value);
          changed = true;
        }
        break;
      }
      case '$push': {
        arrayAt(doc, path, slot).list.push(cloneJson(value));
        changed = true;
        break;
      }
      case '$addToSet': {
        const at = arrayAt(doc, path, slot);
        if (at.created) changed = true;
        const values = isSet(value) && !Array.isArray(value) && Array.isArray(value.$each) ? (value.$each as unknown[]) : [value];
        for (const v of values) {
          if (at.list.some((x) => equalJson(x, v))) continue;
          at.list.push(cloneJson(v));
          changed = true;
        }
        break;
      }
      case '$pull': {
        const now = valueAt(doc, path, slot);
        if (!Array.isArray(now)) break;
        const kept = now.filter((x) => !equalJson(x, value));
        if (kept.length === now.length) break;
        put(doc, path, slot, kept);
        changed = true;
        break;
      }
      default:
        throw new Error(`unsupported update operator ${op as string}`);
    }
  }
  return changed;
}

/** Operators in the order MongoDB applies them to a new document: $setOnInsert first. */
const UPDATE_OPERATORS = ['$setOnInsert', '$set', '$unset', '$inc', '$max', '$min', '$push', '$addToSet', '$pull'] as const;
type Operator = (typeof UPDATE_OPERATORS)[number];

/**
 * The operators an update names, in the order they apply (UPDATE_OPERATORS); throws on one the
 * port does not know. Read from the update's own keys, not by asking it for each of the nine: the
 * updates of a rebuild come in many shapes, and a lookup of a key an object lacks, in code that
 * sees many shapes, was a tenth of the time a rebuild's thread spent applying updates.
 */
function operatorsOf(update: Operators): readonly Operator[] {
  const named = Object.keys(update) as Operator[];
  for (const op of named) if (!SUPPORTED.has(op)) throw new Error(`unsupported update operator ${op}`);
  if (named.length < 2) return named;
  return UPDATE_OPERATORS.filter((op) => named.includes(op));
}

/** Whether `inner` is a path inside the field `outer` names (`a.b` inside `a`; not `ab`). */
const isInside = (inner: string, outer: string): boolean => inner.length > outer.length && inner.charCodeAt(outer.length) === 46 && inner.startsWith(outer);

/**
 * A frozen operand's fields by their top-level name (a projection's seed, see checkedOnce, passed
 * with every event): found once, and the operand's own paths checked then.
 */
const frozenTops = new WeakMap<object, ReadonlyMap<string, readonly string[]>>();

function topsOf(operand: JsonObject, op: Operator): ReadonlyMap<string, readonly string[]> {
  let tops = frozenTops.get(operand);
  if (!tops) {
    checkWithin(operand, op);
    const found = new Map<string, string[]>();
    for (const path of Object.keys(operand)) {
      const top = topOf(path);
      const paths = found.get(top);
      if (paths) paths.push(path);
      else found.set(top, [path]);
    }
    frozenTops.set(operand, (tops = found));
  }
  return tops;
}

const topOf = (path: string): string => {
  const dot = path.indexOf('.');
  return dot < 0 ? path : path.slice(0, dot);
};

/** Whether two paths are one field, or one is inside the other (isInside). */
const overlap = (a: string, b: string): boolean => a === b || isInside(a, b) || isInside(b, a);

const conflict = (op: Operator, path: string, other: Operator, otherPath: string) =>
  new Error(`the update names ${path} (${op}) and ${otherPath} (${other}): updating one would create a conflict at the other, which MongoDB refuses`);

/** A frozen operand's own fields: each is named once, so only a path inside another conflicts (checked once, see topsOf). */
function checkWithin(fields: JsonObject, op: Operator): void {
  const paths = Object.keys(fields);
  if (!paths.some((path) => path.includes('.'))) return;
  for (let i = 0; i < paths.length; i++) for (let j = i + 1; j < paths.length; j++) if (overlap(paths[i]!, paths[j]!)) throw conflict(op, paths[i]!, op, paths[j]!);
}

/**
 * What the update being applied named so far, to refuse one that names a path twice, or a path
 * and another inside it (`$set` of `a` and `$inc` of `a.b`), as MongoDB does ("would create a
 * conflict"): applied in turn, the later operator would win here, and a projection that passes on
 * SQLite would fail on MongoDB. Each path is checked as the update reaches it (notePath), against
 * those before it and the frozen operands' (topsOf), with arrays kept from update to update:
 * checking each update apart, before applying it, took 4 % of the Casties' rebuild. An update
 * refused partway is undone by its caller (applyUpdateOrNothing; applyUpdate's document is new).
 */
const named = { count: 0, ops: [] as Operator[], paths: [] as string[], frozen: 0, frozenOps: [] as Operator[], frozenTops: [] as ReadonlyMap<string, readonly string[]>[] };

/** How applyOperator notes the paths it reaches (see notePath): not (a frozen operand's, checked whole), each, or from the second on (the update's only operator). */
const enum Note {
  None,
  Each,
  Later,
}

/** Starts the checks of an update: its frozen operands' paths (see topsOf). Says which of `ops` are frozen, as bits. */
function beginPaths(update: Operators, ops: readonly Operator[]): number {
  named.count = 0;
  named.frozen = 0;
  let mask = 0;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    const fields = update[op];
    if (!fields || !Object.isFrozen(fields)) continue;
    mask |= 1 << i;
    const tops = topsOf(fields, op);
    // Two frozen operands in one update (rare): compared whole.
    for (let k = 0; k < named.frozen; k++) for (const path of Object.keys(fields)) for (const other of named.frozenTops[k]!.get(topOf(path)) ?? []) if (overlap(path, other)) throw conflict(named.frozenOps[k]!, other, op, path);
    named.frozenOps[named.frozen] = op;
    named.frozenTops[named.frozen++] = tops;
  }
  return mask;
}

function notePath(op: Operator, path: string): void {
  const { count, ops, paths, frozen, frozenOps, frozenTops } = named;
  for (let i = 0; i < count; i++) if (overlap(path, paths[i]!)) throw conflict(ops[i]!, paths[i]!, op, path);
  for (let k = 0; k < frozen; k++) {
    const near = frozenTops[k]!.get(topOf(path));
    if (near) for (const other of near) if (overlap(path, other)) throw conflict(frozenOps[k]!, other, op, path);
  }
  ops[count] = op;
  paths[count] = path;
  named.count = count + 1;
}

/**
 * Refuses an update that names a path twice or a path and another inside it (see notePath),
 * applying nothing: for an update that matched no document, which MongoDB refuses all the same.
 */
export function refuseConflictingPaths(update: Operators): void {
  const ops = operatorsOf(update);
  const frozen = beginPaths(update, ops);
  for (let i = 0; i < ops.length; i++) {
    const fields = update[ops[i]!];
    if (fields && (frozen & (1 << i)) === 0) for (const path in fields) notePath(ops[i]!, path);
  }
}

function applyOperators(doc: JsonObject, update: Operators, inserting: boolean, undo: Undo[] | null): boolean {
  const ops = operatorsOf(update);
  if (ops.length === 1) {
    // Most updates: one operator, whose fields can only conflict with each other (Note.Later).
    const op = ops[0]!;
    const fields = update[op];
    named.count = 0;
    named.frozen = 0;
    if (!fields) return false;
    if (op === '$setOnInsert' && !inserting) {
      // Not applied, but refused all the same when it conflicts (MongoDB checks the update whole).
      refuseConflictingPaths(update);
      return false;
    }
    return applyOperator(doc, op, fields, undo, Note.Later);
  }
  let changed = false;
  const frozen = beginPaths(update, ops);
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    const fields = update[op];
    if (!fields) continue;
    // A frozen operand's paths were checked by beginPaths; the others' as each is reached.
    const note = (frozen & (1 << i)) === 0 ? Note.Each : Note.None;
    if (op === '$setOnInsert' && !inserting) {
      // Not applied, but its paths still conflict (MongoDB checks the update whole).
      if (note) for (const path in fields) notePath(op, path);
      continue;
    }
    if (applyOperator(doc, op, fields, undo, note)) changed = true;
  }
  return changed;
}

/**
 * Applies update operators to `doc` in place and tells whether anything changed (MongoDB's
 * modifiedCount). `$setOnInsert` applies only when `inserting`. Throws on an unknown operator, on
 * `$inc` of a non-number and on changes of `_id`.
 */
export function applyUpdate(doc: JsonObject, update: Operators, inserting: boolean): boolean {
  return applyOperators(doc, update, inserting, null);
}

/**
 * applyUpdate, then `check` of the changed document, all or nothing: should either throw partway
 * (a $inc of text after a $set, an array in an undeclared field), every path the update named so
 * far is put back as it was. Nothing is copied: each path's value before is kept as it is
 * (operators replace values, they do not change them), and an array $push or $addToSet appends to
 * is cut back to its length. Copying the fields named (a Castie's write-in texts, a person's
 * frodads) was a tenth of a rebuild's Castie views.
 */
export function applyUpdateOrNothing(doc: JsonObject, update: Operators, inserting: boolean, check: (doc: JsonObject) => void, kept?: Undo[]): boolean {
  const undo: Undo[] = [];
  try {
    const changed = applyOperators(doc, update, inserting, undo);
    if (changed) check(doc);
    // Kept for the caller, who may put the document back later (see undoUpdates).
    if (kept) for (const u of undo) kept.push(u);
    return changed;
  } catch (error) {
    undoUpdates(undo);
    throw error;
  }
}

/**
 * Puts documents back as they were before the updates whose undo `undo` holds, in the order they
 * were applied (see applyUpdateOrNothing's `kept`): the last first.
 */
export function undoUpdates(undo: readonly Undo[]): void {
  for (let i = undo.length - 1; i >= 0; i--) {
    const { container, key, before, length, order } = undo[i]!;
    if (before === MISSING) delete container[key];
    else {
      container[key] = before;
      if (length >= 0) (before as unknown[]).length = length;
      // A key $unset deleted comes back last: the keys after it move behind it again, as they were (documents compare in key order).
      if (order) for (const later of order.slice(order.indexOf(key) + 1)) if (Object.hasOwn(container, later)) moveLast(container, later);
    }
  }
}

/**
 * Where a path's value was, and what it was (MISSING: the key was not there; `length`: of an array
 * appended to, else -1; `order`: the container's keys, when $unset may delete the key).
 */
export interface Undo {
  container: Record<string, unknown>;
  key: string;
  before: unknown;
  length: number;
  order: string[] | null;
}

function moveLast(container: Record<string, unknown>, key: string): void {
  const value = container[key];
  delete container[key];
  container[key] = value;
}

/** The undo of an update at a slot (see slotOf): the value its key holds now. */
function undoAt({ container, key }: Slot, appends: boolean, unsets: boolean): Undo {
  const before = Object.hasOwn(container, key) ? container[key] : MISSING;
  const frozen = before !== MISSING && Object.isFrozen(before);
  return { container, key, before, length: appends && Array.isArray(before) && !frozen ? before.length : -1, order: unsets && before !== MISSING ? Object.keys(container) : null };
}

/**
 * The undo of an update at `path`: its value, or the first key along it that is missing or not a
 * container (the update creates or replaces what is below it).
 */
function undoOf(doc: JsonObject, path: string, appends: boolean, unsets: boolean): Undo {
  let container = doc as Record<string, unknown>;
  for (let start = 0; ; ) {
    const dot = path.indexOf('.', start);
    const key = dot < 0 ? path.slice(start) : path.slice(start, dot);
    const before = Object.hasOwn(container, key) ? container[key] : MISSING;
    // A frozen value is replaced by a copy, never changed (copy on write): putting it back undoes.
    const frozen = before !== MISSING && Object.isFrozen(before);
    if (dot < 0 || before === MISSING || before === null || typeof before !== 'object' || frozen) return undoAt({ container, key }, appends, unsets);
    container = before as Record<string, unknown>;
    start = dot + 1;
  }
}

/** A field a document did not have (see applyUpdateOrNothing). */
const MISSING = Symbol('missing');

/**
 * The document an upsert starts from: the filter's equality conditions (plain values and $eq,
 * at the top level and inside $and), as MongoDB builds it.
 */
export function seedFromFilter(filter: JsonObject): JsonObject {
  const doc: JsonObject = {};
  const visit = (f: JsonObject) => {
    for (const [key, condition] of Object.entries(f)) {
      if (key === '$and') for (const sub of condition as JsonObject[]) visit(sub);
      if (key.startsWith('$')) continue;
      if (isOperatorObject(condition)) {
        if ('$eq' in condition) setPath(doc, key, cloneJson(condition.$eq));
      } else if (!(condition instanceof RegExp)) setPath(doc, key, cloneJson(condition));
    }
  };
  visit(filter);
  return doc;
}

export const isOperatorObject = (v: unknown): v is JsonObject => isObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k.startsWith('$'));

/** Compiled regular expressions of $regex conditions, shared by the matcher and SQL's regexp(). */
const regexCache = new Map<string, RegExp>();
export function regexFor(pattern: string | RegExp, options = ''): RegExp {
  if (pattern instanceof RegExp) {
    if (!options) return pattern;
    pattern = pattern.source;
  }
  const key = `${options}/${pattern}`;
  let re = regexCache.get(key);
  if (!re) {
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(key, (re = new RegExp(pattern, options.replace(/[^imsu]/g, ''))));
  }
  return re;
}

/**
 * Tests a document against a filter with the port's semantics (see ports/document-store.ts).
 * `arrays` names the top-level fields holding arrays: conditions on them apply to elements.
 */
export function matches(doc: JsonObject, filter: JsonObject, arrays: ReadonlySet<string>): boolean {
  // for…in, not Object.entries: this runs per document of a read (a feed page checks hundreds),
  // and entries allocates an array of pairs each time. Own keys only, as entries gives them.
  for (const key in filter) {
    if (!Object.hasOwn(filter, key)) continue;
    const condition = filter[key];
    if (key === '$and') {
      if (!(condition as JsonObject[]).every((sub) => matches(doc, sub, arrays))) return false;
    } else if (key === '$or') {
      if (!(condition as JsonObject[]).some((sub) => matches(doc, sub, arrays))) return false;
    } else if (key.startsWith('$')) {
      throw new Error(`unsupported filter operator ${key}`);
    } else if (!fieldMatches(getPath(doc, key), condition, arrays.has(key))) {
      return false;
    }
  }
  return true;
}

function fieldMatches(value: unknown, condition: unknown, isArray: boolean): boolean {
  if (condition instanceof RegExp) return matchesOperator(value, '$regex', condition, '', isArray);
  if (!isOperatorObject(condition)) return equalsCondition(value, condition, isArray);
  const options = typeof condition.$options === 'string' ? condition.$options : '';
  for (const op in condition) {
    if (!Object.hasOwn(condition, op)) continue;
    const operand = condition[op];
    if (op === '$options') continue;
    if (!matchesOperator(value, op, operand, options, isArray)) return false;
  }
  return true;
}

/** Equality as a filter means it: null matches missing; on an array field, any element. */
function equalsCondition(value: unknown, wanted: unknown, isArray: boolean): boolean {
  if (wanted === null) return value === null || value === undefined;
  if (isArray && Array.isArray(value)) return value.some((e) => equalJson(e, wanted));
  return equalJson(value, wanted);
}

function matchesOperator(value: unknown, op: string, operand: unknown, options: string, isArray: boolean): boolean {
  const elements: unknown[] = isArray && Array.isArray(value) ? value : [value];
  switch (op) {
    case '$eq':
      return equalsCondition(value, operand, isArray);
    case '$ne':
      return !equalsCondition(value, operand, isArray);
    case '$in':
      return (operand as unknown[]).some((v) => equalsCondition(value, v, isArray));
    case '$nin':
      return !(operand as unknown[]).some((v) => equalsCondition(value, v, isArray));
    case '$exists':
      return (value !== undefined) === Boolean(operand);
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return elements.some((e) => {
        const order = compareScalars(e, operand);
        if (order === null) return false;
        return op === '$gt' ? order > 0 : op === '$gte' ? order >= 0 : op === '$lt' ? order < 0 : order <= 0;
      });
    case '$regex':
      return elements.some((e) => typeof e === 'string' && regexFor(operand as string | RegExp, options).test(e));
    default:
      throw new Error(`unsupported filter operator ${op}`);
  }
}
