import { LRUCache } from 'lru-cache';
import { deepFreeze } from '../deep-freeze.ts';
import type { JsonObject } from './json-documents.ts';

/**
 * Committed documents, parsed once and shared by every read until a commit changes them: a feed
 * page reads hundreds of small documents (people, forecasters, counts), and parsing their JSON
 * again on every request cost more than finding them.
 *
 * Sound because one store object is the only writer of its file: every commit names the ids it
 * wrote and they leave the cache right after it (and after a rollback, since in memory the reader
 * is the writer). Only reads of committed data fill it, never a unit of work's own reads. Entries
 * are deeply frozen: a caller that changed a shared document would change it for every reader,
 * so it fails at once instead. Bounded by an estimate of the heap the entries take (three times
 * their JSON text), least recently used first out.
 */
export class DocumentCache {
  readonly #lru: LRUCache<string, JsonObject> | null;
  /**
   * The cache key of every cached document, by table and id. Building `table\0id` on every
   * lookup cost more than the lookup itself (a new string is hashed each time: 0.5 ms for the
   * 700 documents of a feed page); an interned key was hashed once. Kept exactly for the
   * entries the LRU holds (removed when one leaves it).
   */
  readonly #keys = new Map<string, Map<string, string>>();

  constructor(maxBytes: number) {
    this.#lru =
      maxBytes > 0
        ? new LRUCache<string, JsonObject>({
            maxSize: maxBytes,
            dispose: (_value, k, reason) => {
              if (reason === 'set') return;
              const bar = k.indexOf('\u0000');
              const ids = this.#keys.get(k.slice(0, bar));
              ids?.delete(k.slice(bar + 1));
              if (ids?.size === 0) this.#keys.delete(k.slice(0, bar));
            },
          })
        : null;
  }

  /** False when the store keeps no documents (size 0): every read parses. */
  get enabled(): boolean {
    return this.#lru !== null;
  }

  /**
   * The cached document; `null` when the database is known to have none (a page asks for the
   * viewer's forecasts on every Castie, most of which do not exist); undefined when unknown.
   */
  get(table: string, id: string): JsonObject | null | undefined {
    const k = this.#keys.get(table)?.get(id);
    if (k === undefined) return undefined;
    const found = this.#lru?.get(k, GET_OPTIONS);
    return found === ABSENT ? null : found;
  }

  /** Remembers that the database has no such document (until a commit writes it). */
  absent(table: string, id: string): void {
    this.#lru?.set(this.#key(table, id), ABSENT, { size: heapEstimate(id.length) });
  }

  /** The document a committed row holds: the cached one, else parsed from its text (then cached). */
  parsed(table: string, id: string, text: string): JsonObject {
    const cached = this.get(table, id);
    if (cached) return cached;
    const doc = deepFreeze(JSON.parse(text) as JsonObject);
    this.#lru?.set(this.#key(table, id), doc, { size: heapEstimate(text.length) });
    return doc;
  }

  /** Forgets documents a commit (or rollback) changed. */
  forget(table: string, ids: Iterable<string>): void {
    const keys = this.#keys.get(table);
    if (!this.#lru || !keys) return;
    for (const id of ids) {
      const k = keys.get(id);
      if (k !== undefined) this.#lru.delete(k);
    }
  }

  /** Forgets a whole collection (dropped). */
  forgetTable(table: string): void {
    const keys = this.#keys.get(table);
    if (!this.#lru || !keys) return;
    for (const k of [...keys.values()]) this.#lru.delete(k);
    this.#keys.delete(table);
  }

  clear(): void {
    this.#lru?.clear();
    this.#keys.clear();
  }

  /** The interned key of a document about to be cached. */
  #key(table: string, id: string): string {
    let ids = this.#keys.get(table);
    if (!ids) this.#keys.set(table, (ids = new Map()));
    let k = ids.get(id);
    if (k === undefined) ids.set(id, (k = `${table}\u0000${id}`));
    return k;
  }
}

const ABSENT: JsonObject = Object.freeze({});

/**
 * The options of every lookup: lru-cache makes a new empty object per `get` without them (a feed
 * page's 700 lookups made a twelfth of its garbage), and writes `status` into them, so not frozen.
 */
const GET_OPTIONS: LRUCache.GetOptions<string, JsonObject, unknown> = {};

/** Parsed JSON takes about three times its text on the heap, plus the entry and its key. */
const heapEstimate = (chars: number): number => 3 * chars + 160;
