import { LRUCache } from 'lru-cache';
import type { ServiceMetrics } from '../observability/metrics.ts';
import type { Clock } from '../ports/clock.ts';

/** What an answer is being made from: the store's version and the time, when its making began. */
export interface Making {
  readonly version: number;
  readonly at: number;
}

/**
 * The Buffers kept as answers, whoever holds them now: what a later step may itself keep by
 * identity (the gateway's compressed answers), where any other Buffer is made once and dropped.
 */
const keptAnswers = new WeakSet<Buffer>();

/** Whether these bytes are an answer RepeatedAnswers keeps (and may give again, the same Buffer). */
export const isKeptAnswer = (bytes: Buffer): boolean => keptAnswers.has(bytes);

/**
 * The bytes in memory of their own: a slice of a larger buffer (Node's shared 8 KiB pool for
 * small ones, zlib's output buffers) is copied out, since keeping it would keep all of that alive
 * beyond what a budget counts.
 */
export function ownMemory(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return own;
}

interface Kept {
  /** The answer's UTF-8 bytes: sent as they are, never encoded again. */
  bytes: Buffer;
  version: number;
  /** When it was kept: the times it was made at were no later. */
  at: number;
  /** When time alone changes the answer (an end date passing), in ms; Infinity: never. */
  until: number;
}

/** Default budget: a few hundred feed pages of 100 Casties. */
const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Answers a route gives again, as they are, to the same caller asking the same URL while the
 * read models it reads did not change: a user's home tab asked again and again between two
 * commits (a pull to refresh, a tab switched back to, a phone resuming) costs a lookup instead of
 * a page built anew. The store's committed version (`DocumentStore.committedVersion`) says
 * whether anything changed: any commit, of any collection, makes every answer made before it
 * stale, so there is no rule per read model to get wrong, and an answer is never older than the
 * read models the same request would otherwise read. What time alone changes (a Castie's end
 * passing makes it answerable) the route states while it makes the answer (`validUntil`). A
 * store that cannot tell its version (MongoDB, written by other processes) keeps nothing.
 *
 * Under a steady stream of writes most answers go stale before they are asked again; a miss
 * costs one version read, and the answer is sent as the bytes it is kept as: encoding a text
 * answer into UTF-8 (about 50 µs for a 94 KB home page) happens once, where writing it to the
 * socket did it for every request.
 *
 * Bounded by the memory the kept bytes hold (each in a buffer of its own, not a slice of a shared
 * pool), least recently used first out.
 */
export class RepeatedAnswers {
  readonly #kept: LRUCache<string, Kept>;

  constructor(
    private readonly deps: {
      /** The read models' store version (DocumentStore.committedVersion). */
      version: () => number | null;
      clock: Clock;
      maxBytes?: number;
      /** Told of every lookup: hit or miss (metrics). */
      observer?: Pick<ServiceMetrics, 'repeatedAnswerLookup'>;
    },
  ) {
    const maxSize = deps.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#kept = new LRUCache({ maxSize, maxEntrySize: Math.max(1, Math.floor(maxSize / 8)), sizeCalculation: (kept, key) => kept.bytes.length + 2 * key.length + 64 });
  }

  /** The answer kept for `key`, if the store is at the version it was made at and its time has not run out. */
  find(key: string): Buffer | undefined {
    const found = this.#valid(key);
    this.deps.observer?.repeatedAnswerLookup(found !== undefined);
    return found;
  }

  #valid(key: string): Buffer | undefined {
    const kept = this.#kept.get(key);
    if (kept === undefined) return undefined;
    const now = this.deps.clock.now().getTime();
    // A clock set back (CLOCK=manual) is before the answer was made: it may differ then too.
    if (kept.version !== this.deps.version() || now < kept.at || now >= kept.until) {
      this.#kept.delete(key);
      return undefined;
    }
    return kept.bytes;
  }

  /** Called before an answer's first read: what it is made from; null when nothing can be kept. */
  begin(): Making | null {
    const version = this.deps.version();
    return version === null ? null : { version, at: this.deps.clock.now().getTime() };
  }

  /**
   * Keeps an answer made since `making`, unless a commit came meanwhile (it may mix two versions),
   * the clock was set back meanwhile, or time already changed it. It holds from now (the times it
   * was made at were no later) until `until`, an instant later than any it was made at. Returns
   * the bytes to send: the kept ones (small answers are copied out of Node's shared pool, whose
   * 8 KiB slab a slice would keep alive).
   */
  keep(key: string, making: Making, bytes: Buffer, until: number): Buffer {
    const at = this.deps.clock.now().getTime();
    if (this.deps.version() !== making.version || at < making.at || until <= at) return bytes;
    const own = ownMemory(bytes);
    keptAnswers.add(own);
    this.#kept.set(key, { bytes: own, version: making.version, at, until });
    return own;
  }

  /** Answers kept now (tests). */
  get size(): number {
    return this.#kept.size;
  }
}
