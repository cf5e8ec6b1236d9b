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
    async close() {
      // QUIT lets pending replies arrive; on a dead connection just drop it.
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
