import { Redis } from 'ioredis';
import type { Cache } from '../ports/cache.ts';

/** INCR, and PEXPIRE when the counter was just created. */
const INCREMENT = "local n = redis.call('INCR', KEYS[1]); if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end; return n";

/**
 * The cache port on Redis: string keys under `keyPrefix`, TTLs as `SET … PX`. A `ttlMs` of zero
 * or less deletes the key, as the value has expired already (Redis refuses PX 0). Connection
 * errors go to `onError` (ioredis reconnects by itself); without it ioredis reports them itself.
 */
export function createRedisCache({ url, keyPrefix = '', onError }: { url: string; keyPrefix?: string; onError?: (error: Error) => void }): Cache {
  const redis = new Redis(url, { keyPrefix, maxRetriesPerRequest: 3 });
  if (onError) redis.on('error', onError);
  // A connection in subscriber mode cannot run commands: subscriptions get their own, opened on
  // the first one. Channels take the key prefix too (ioredis prefixes keys only), so deployments
  // and tests sharing a server do not hear each other.
  let subscriber: Redis | null = null;
  const listeners = new Map<string, Set<(message: string) => void>>();
  const connectSubscriber = (): Redis => {
    if (subscriber) return subscriber;
    const sub = redis.duplicate({ keyPrefix: '' });
    if (onError) sub.on('error', onError);
    sub.on('message', (channel: string, message: string) => {
      for (const listener of [...(listeners.get(channel) ?? [])]) {
        try {
          listener(message);
        } catch {
          // One broken subscriber does not keep the message from the others.
        }
      }
    });
    subscriber = sub;
    return sub;
  };
  return {
    async get(key) {
      return redis.get(key);
    },
    async set(key, value, ttlMs) {
      if (ttlMs === undefined) await redis.set(key, value);
      else if (ttlMs <= 0) await redis.del(key);
      else await redis.set(key, value, 'PX', Math.ceil(ttlMs));
    },
    async del(key) {
      await redis.del(key);
    },
    async increment(key, ttlMs) {
      // One script, so the counter and its expiry are set together (no counter left without a TTL).
      const n = await redis.eval(INCREMENT, 1, key, String(Math.max(1, Math.ceil(ttlMs))));
      return Number(n);
    },
    async ttl(key) {
      const left = await redis.pttl(key);
      return left > 0 ? left : null;
    },
    async publish(channel, message) {
      await redis.publish(keyPrefix + channel, message);
    },
    async subscribe(channel, onMessage) {
      const name = keyPrefix + channel;
      const listener = (message: string) => onMessage(message);
      let set = listeners.get(name);
      if (!set) {
        set = new Set();
        listeners.set(name, set);
        set.add(listener);
        await connectSubscriber().subscribe(name);
      } else set.add(listener);
      const mine = set;
      return async () => {
        mine.delete(listener);
        if (mine.size === 0 && listeners.get(name) === mine) {
          listeners.delete(name);
          await subscriber?.unsubscribe(name);
        }
      };
    },
    async close() {
      if (subscriber) await subscriber.quit().catch(() => subscriber?.disconnect());
      // QUIT lets pending replies arrive; on a dead connection just drop it.
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
