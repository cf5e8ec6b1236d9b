/**
 * The cache port: small shared state with expiry (sessions' last-write positions, verified
 * credentials, rate counters), and pub/sub for live updates that must reach every gateway. Embedded: in
 * process; cluster: Redis.
 */
import type { UnitOfWork } from './document-store.ts';

export interface Cache {
  get(key: string): Promise<string | null>;
  /** Stores the value; `ttlMs` makes it expire. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  del(key: string): Promise<void>;
  /**
   * Adds one to a counter and returns its new value. A counter that did not exist starts at 1 and
   * expires `ttlMs` later (a fixed window: later increments do not extend it).
   */
  increment(key: string, ttlMs: number): Promise<number>;
  /** Milliseconds until the key expires; null when it does not exist or never expires. */
  ttl(key: string): Promise<number | null>;
  /**
   * Sends a message to every current subscriber of `channel`, in this process and (Redis) in
   * every other process sharing the server. Fire and forget: a subscriber that is not listening
   * at that moment never sees it (live updates, not a queue). Resolves once the message is sent.
   */
  publish(channel: string, message: string): Promise<void>;
  /**
   * Calls `onMessage` for each message published on `channel` from now on, in publishing order.
   * Resolves once the subscription is active (a publish after that reaches it); the returned
   * function ends it. Channels are not prefixed by keys' prefixes' rules: they are their own space.
   */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /**
   * The same reads answered at once, by a cache that lives in this process (the embedded
   * profile); absent across a network (Redis). Each is the method of the same name, without the
   * promise: a caller with several reads per request (the gateway's admission of a signed-in
   * request: five) makes them without a dozen promises and their turns of the microtask queue,
   * which cost more than the reads. A wrapper of a cache (key prefixes, metrics, faults) must
   * offer its own or none, never pass the inner one on: callers would read around the wrapper.
   */
  readonly inProcess?: InProcessReads;
}

/** Reads of a cache in this process, answered synchronously (see `Cache.inProcess`). */
export interface InProcessReads {
  get(key: string): string | null;
  increment(key: string, ttlMs: number): number;
  ttl(key: string): number | null;
  /**
   * Moves on with every `set` and `del` (not with `increment`, nor with values expiring): while it
   * has not moved, every value written with `set` and read before is still the value, unless its
   * time to live ran out since; counters change without it. A reader that read the same values
   * for every request (a connection's credential checks) reads them again only when it moved.
   */
  readonly writes: number;
}

/** One change to a sorted set: the member's score set (added when new), or with `score` null the member removed. */
export interface ScoreChange {
  key: string;
  member: string;
  score: number | null;
}

/** A member of a sorted set with its score, as rank ranges return them. */
export interface RankedMember {
  member: string;
  score: number;
}

/**
 * Sorted sets, for leaderboards and rankings: members with a numeric score, read in rank order.
 * Rank order is the one rule of every adapter: highest score first, equal scores by member in
 * ascending byte order (UTF-8, as Redis and SQLite compare), so ties are deterministic and a
 * caller picks the tie-break by how it spells members. Ranks count from 0. A set with no members
 * does not exist. Embedded: in the service's read-model store (persisted with its checkpoints);
 * cluster: Redis.
 *
 * Scores are set, never incremented: a projection delivered the same event twice must not count
 * it twice, so it sets the score its idempotent read models hold.
 */
export interface SortedSets {
  /**
   * Applies every change together: a reader sees all of them or none (Redis MULTI; one
   * transaction). `unit`: the projection's unit of work the changes belong to, or null outside
   * one. An adapter that keeps its sets in the read-model store (embedded) writes them in that
   * unit, so they commit with the batch's checkpoint (and a unit of its own when null); Redis,
   * outside the store, applies them at once either way. Never null inside a unit: on SQLite a
   * unit of its own would wait for the open one.
   */
  setScores(changes: readonly ScoreChange[], unit: UnitOfWork | null): Promise<void>;
  /** The members ranked `offset` to `offset + limit - 1`, with their scores; fewer at the end. */
  ranked(key: string, offset: number, limit: number): Promise<RankedMember[]>;
  /** The member's rank (0 = first); null when it is not a member. */
  rankOf(key: string, member: string): Promise<number | null>;
  /** How many members the set holds. */
  size(key: string): Promise<number>;
  /** Removes every sorted set whose key starts with `prefix` (a rebuild starts from nothing). */
  dropSortedSets(prefix: string): Promise<void>;
}
