/**
 * The cache port: small shared state with expiry (sessions' last-write positions, verified
 * credentials, rate counters), and pub/sub for live updates that must reach every gateway. Embedded: in
 * process; cluster: Redis.
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
}
