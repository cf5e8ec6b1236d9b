/**
 * The cache port: small shared state with expiry (sessions' last-write positions, verified
 * credentials, rate counters). Embedded: in process; cluster: Redis.
 */
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
  close(): Promise<void>;
}
