import type { Cache, InProcessReads } from '../ports/cache.ts';

interface Entry {
  /** A counter (`increment`) keeps its number: read as text by `get`, as Redis answers it. */
  value: string | number;
  /** Epoch ms after which the entry is gone; Infinity without a TTL. */
  expiresAt: number;
}

/**
 * The embedded cache: a Map in this process. An expired entry is dropped when read, and a
 * periodic sweep (an unref'd timer, so it never keeps the process alive) drops the ones nobody
 * reads again. A `ttlMs` of zero or less stores nothing, as the value is expired already. `now`
 * exists for tests; TTLs follow real time by default, as Redis does.
 */
export function createMemoryCache(options: { sweepIntervalMs?: number; now?: () => number } = {}): Cache {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const channels = new Map<string, Set<(message: string) => void>>();
  const sweep = setInterval(() => {
    const t = now();
    for (const [key, entry] of entries) if (entry.expiresAt <= t) entries.delete(key);
  }, options.sweepIntervalMs ?? 30_000);
  sweep.unref();

  let writes = 0;
  const inProcess: InProcessReads = {
    get writes() {
      return writes;
    },
    get(key) {
      const entry = entries.get(key);
      if (!entry) return null;
      if (entry.expiresAt <= now()) {
        entries.delete(key);
        return null;
      }
      return typeof entry.value === 'string' ? entry.value : String(entry.value);
    },
    increment(key, ttlMs) {
      const t = now();
      const entry = entries.get(key);
      if (!entry || entry.expiresAt <= t) {
        entries.set(key, { value: 1, expiresAt: t + ttlMs });
        return 1;
      }
      const next = Number(entry.value) + 1;
      entry.value = next;
      return next;
    },
    ttl(key) {
      const entry = entries.get(key);
      if (!entry || entry.expiresAt === Infinity) return null;
      const left = entry.expiresAt - now();
      return left > 0 ? left : null;
    },
  };

  return {
    inProcess,
    async get(key) {
      return inProcess.get(key);
    },
    async set(key, value, ttlMs) {
      writes++;
      if (ttlMs !== undefined && ttlMs <= 0) {
        entries.delete(key);
        return;
      }
      entries.set(key, { value, expiresAt: ttlMs === undefined ? Infinity : now() + ttlMs });
    },
    async del(key) {
      writes++;
      entries.delete(key);
    },
    async increment(key, ttlMs) {
      return inProcess.increment(key, ttlMs);
    },
    async ttl(key) {
      return inProcess.ttl(key);
    },
    async publish(channel, message) {
      // A copy: a subscriber that unsubscribes while called does not skip the next one.
      for (const listener of [...(channels.get(channel) ?? [])]) {
        try {
          listener(message);
        } catch {
          // One broken subscriber does not keep the message from the others.
        }
      }
    },
    async subscribe(channel, onMessage) {
      // A wrapper per subscription: the same function subscribed twice is two subscriptions.
      const listener = (message: string) => onMessage(message);
      const set = channels.get(channel) ?? channels.set(channel, new Set()).get(channel)!;
      set.add(listener);
      return async () => {
        set.delete(listener);
        if (set.size === 0 && channels.get(channel) === set) channels.delete(channel);
      };
    },
    async close() {
      writes++;
      clearInterval(sweep);
      entries.clear();
      channels.clear();
    },
  };
}
