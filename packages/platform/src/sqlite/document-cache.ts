import { LRUCache } from 'lru-cache';
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

  constructor(maxBytes: number) {
    this.#lru = maxBytes > 0 ? new LRUCache<string, JsonObject>({ maxSize: maxBytes }) : null;
  }

  /**
   * The cached document; `null` when the database is known to have none (a page asks for the
   * viewer's forecasts on every Castie, most of which do not exist); undefined when unknown.
   */
  get(table: string, id: string): JsonObject | null | undefined {
    const found = this.#lru?.get(key(table, id));
    return found === ABSENT ? null : found;
  }

  /** Remembers that the database has no such document (until a commit writes it). */
  absent(table: string, id: string): void {
    this.#lru?.set(key(table, id), ABSENT, { size: heapEstimate(id.length) });
  }

  /** The document a committed row holds: the cached one, else parsed from its text (then cached). */
  parsed(table: string, id: string, text: string): JsonObject {
    const k = key(table, id);
    const cached = this.#lru?.get(k);
    if (cached && cached !== ABSENT) return cached;
    const doc = deepFreeze(JSON.parse(text) as JsonObject);
    this.#lru?.set(k, doc, { size: heapEstimate(text.length) });
    return doc;
  }

  /** Forgets documents a commit (or rollback) changed. */
  forget(table: string, ids: Iterable<string>): void {
    if (!this.#lru) return;
    for (const id of ids) this.#lru.delete(key(table, id));
  }

  /** Forgets a whole collection (dropped). */
  forgetTable(table: string): void {
    if (!this.#lru) return;
    const prefix = key(table, '');
    for (const k of [...this.#lru.keys()]) if (k.startsWith(prefix)) this.#lru.delete(k);
  }

  clear(): void {
    this.#lru?.clear();
  }
}

const ABSENT: JsonObject = Object.freeze({});

/** Parsed JSON takes about three times its text on the heap, plus the entry and its key. */
const heapEstimate = (chars: number): number => 3 * chars + 160;

const key = (table: string, id: string): string => `${table}\u0000${id}`;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
