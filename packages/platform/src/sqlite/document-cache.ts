import { deepFreeze } from '../deep-freeze.ts';
import type { JsonObject } from './json-documents.ts';

/** One cached document (or the knowledge that there is none) and what the clock knows of it. */
interface Slot {
  readonly table: Map<string, Slot>;
  readonly id: string;
  /** The document (ABSENT once gone, so that the clock does not hold it). */
  doc: JsonObject;
  readonly bytes: number;
  /** Read since the clock hand last passed (it passes once more before evicting). */
  used: boolean;
  /** Forgotten, evicted or replaced: the hand skips it, and the next compaction drops it. */
  gone: boolean;
}

/**
 * Committed documents, parsed once and shared by every read until a commit changes them: a feed
 * page reads hundreds of small documents (people, forecasters, counts), and parsing their JSON
 * again on every request cost more than finding them.
 *
 * Sound because every commit to its file names the ids it wrote, and they leave the cache: the
 * store's own commits right after they commit (and after a rollback, since in memory the reader
 * is the writer), or, for documents a unit of its own updated, take their place as committed;
 * another connection's (the projections thread's) once it tells the store (`changedElsewhere`).
 * Until then a read may get a document as it was before that commit: what others write shows
 * eventually, and a user waiting for their own write waits until the store was told.
 * Reads of committed data and those commits fill it, never a unit of work's own reads. Entries
 * are deeply frozen: a caller that changed a shared document would change it for every reader,
 * so it fails at once instead. Bounded by an estimate of the heap the entries take (three times
 * their JSON text).
 *
 * Evicted by the clock algorithm (an approximation of least recently used): a read only marks
 * its entry used, and the hand, sweeping entries in the order they came, spares a used one once.
 * A lookup is one Map read per id. With lru-cache (a well-kept library, used before) a lookup
 * was two Map reads (table and id to the cache's key, then the key) and the library's recency
 * bookkeeping: 13 % of a home page's CPU, of its 760 lookups.
 */
export class DocumentCache {
  /** Slots by table and id. */
  readonly #tables = new Map<string, Map<string, Slot>>();
  /** Every slot in the order it came (gone ones until the hand or a compaction drops them). */
  #clock: Slot[] = [];
  #hand = 0;
  #gone = 0;
  #bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** False when the store keeps no documents (size 0): every read parses. */
  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  /**
   * The cached document; `null` when the database is known to have none (a page asks for the
   * viewer's forecasts on every Castie, most of which do not exist); undefined when unknown.
   */
  get(table: string, id: string): JsonObject | null | undefined {
    const slot = this.#tables.get(table)?.get(id);
    if (slot === undefined) return undefined;
    slot.used = true;
    return slot.doc === ABSENT ? null : slot.doc;
  }

  /** Remembers that the database has no such document (until a commit writes it). */
  absent(table: string, id: string): void {
    this.#set(table, id, ABSENT, heapEstimate(id.length));
  }

  /** The document a committed row holds: the cached one, else parsed from its text (then cached). */
  parsed(table: string, id: string, text: string): JsonObject {
    const cached = this.get(table, id);
    if (cached) return cached;
    const doc = deepFreeze(JSON.parse(text) as JsonObject);
    this.#set(table, id, doc, heapEstimate(text.length));
    return doc;
  }

  /**
   * A document as a commit just wrote it (`chars`: its JSON text's length): it replaces what was
   * cached, and true says so. The caller hands it over: it is frozen here, and nobody may change
   * it any more. False (nothing kept) when the document is not what its JSON text reads back as
   * (a number JSON cannot hold, -0, an undefined field, anything but plain objects and arrays):
   * the cache must hand out exactly what the database holds.
   */
  committed(table: string, id: string, doc: JsonObject, chars: number): boolean {
    if (!frozenJson(doc)) return false;
    this.#set(table, id, doc, heapEstimate(chars));
    return true;
  }

  /** Forgets documents a commit (or rollback) changed. */
  forget(table: string, ids: Iterable<string>): void {
    const slots = this.#tables.get(table);
    if (!slots) return;
    for (const id of ids) {
      const slot = slots.get(id);
      if (slot) this.#drop(slot);
    }
    this.#compactIfMostlyGone();
  }

  /** Forgets a whole collection (dropped). */
  forgetTable(table: string): void {
    const slots = this.#tables.get(table);
    if (!slots) return;
    for (const slot of [...slots.values()]) this.#drop(slot);
    this.#tables.delete(table);
    this.#compactIfMostlyGone();
  }

  clear(): void {
    this.#tables.clear();
    this.#clock = [];
    this.#hand = 0;
    this.#gone = 0;
    this.#bytes = 0;
  }

  /** Heap the cached entries take, estimated (for tests). */
  get bytes(): number {
    return this.#bytes;
  }

  #set(table: string, id: string, doc: JsonObject, bytes: number): void {
    let slots = this.#tables.get(table);
    if (!slots) this.#tables.set(table, (slots = new Map()));
    const old = slots.get(id);
    if (old) this.#drop(old);
    // As lru-cache did: an entry of more than the whole budget is not kept (nor what it replaces).
    if (bytes > this.maxBytes) return;
    const slot: Slot = { table: slots, id, doc, bytes, used: false, gone: false };
    slots.set(id, slot);
    this.#clock.push(slot);
    this.#bytes += bytes;
    this.#evict();
    this.#compactIfMostlyGone();
  }

  /** Sweeps the hand until the entries fit: a used one loses its mark, an unused one leaves. */
  #evict(): void {
    while (this.#bytes > this.maxBytes) {
      if (this.#hand >= this.#clock.length) this.#compact();
      const slot = this.#clock[this.#hand++]!;
      if (slot.gone) continue;
      if (slot.used) slot.used = false;
      else this.#drop(slot);
    }
  }

  #drop(slot: Slot): void {
    if (slot.gone) return;
    slot.gone = true;
    slot.doc = ABSENT;
    this.#gone++;
    this.#bytes -= slot.bytes;
    if (slot.table.get(slot.id) === slot) slot.table.delete(slot.id);
  }

  /**
   * Gone slots leave the clock once they are most of it: commits forget ids all the time, and
   * while documents keep coming the hand evicts one for each, never reaching the clock's end.
   */
  #compactIfMostlyGone(): void {
    if (this.#gone > 1024 && this.#gone * 2 > this.#clock.length) this.#compact();
  }

  /** The clock without its gone slots; the hand stays on the same live slot (or wraps around). */
  #compact(): void {
    let kept = 0;
    let hand = 0;
    for (let i = 0; i < this.#clock.length; i++) {
      if (i === this.#hand) hand = kept;
      const slot = this.#clock[i]!;
      if (!slot.gone) this.#clock[kept++] = slot;
    }
    this.#hand = this.#hand < this.#clock.length && hand < kept ? hand : 0;
    this.#clock.length = kept;
    this.#gone = 0;
  }
}

const ABSENT: JsonObject = Object.freeze({});

/** Freezes a value deeply; false if it holds anything that JSON text would not give back as it is. */
function frozenJson(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      const proto = Object.getPrototypeOf(value) as unknown;
      if (Array.isArray(value)) {
        if (proto !== Array.prototype) return false;
        for (const item of value) if (!frozenJson(item)) return false;
      } else {
        if (proto !== Object.prototype && proto !== null) return false;
        for (const key in value) if (!frozenJson((value as Record<string, unknown>)[key])) return false;
      }
      Object.freeze(value);
      return true;
    }
    default:
      return false;
  }
}

/** Parsed JSON takes about three times its text on the heap, plus the entry and its key. */
const heapEstimate = (chars: number): number => 3 * chars + 160;
