/**
 * The cache port: small shared state with expiry (sessions' last-write positions, verified
 * credentials, rate counters). Embedded: in process; cluster: Redis.
 */
export interface Cache {
  get(key: string): Promise<string | null>;
  /** Stores the value; `ttlMs` makes it expire. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  del(key: string): Promise<void>;
  close(): Promise<void>;
}
