import { Redis } from 'ioredis';
import type { Cache, SortedSets } from '../ports/cache.ts';

/** INCR, and PEXPIRE when the counter was just created. */
const INCREMENT = "local n = redis.call('INCR', KEYS[1]); if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end; return n";

/** Redis stores the negated score: ascending order is then highest first with ties by member in byte order, the port's rank order. `|| 0` keeps -0 out. */
const stored = (score: number): string => String(-score);
const unstored = (text: string): number => -Number(text) || 0;

/**
 * The cache port and the sorted sets on Redis: string keys under `keyPrefix`, TTLs as
 * `SET … PX`. A `ttlMs` of zero or less deletes the key, as the value has expired already (Redis
 * refuses PX 0). Connection errors go to `onError` (ioredis reconnects by itself); without it
 * ioredis reports them itself.
 */
export function createRedisCache({ url, keyPrefix = '', onError }: { url: string; keyPrefix?: string; onError?: (error: Error) => void }): Cache & SortedSets {
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
    async setScores(changes) {
      if (changes.length === 0) return;
      // MULTI: a reader never sees a member moved off one board but not yet onto another.
      const multi = redis.multi();
      for (const c of changes) {
        if (c.score === null) multi.zrem(c.key, c.member);
        else multi.zadd(c.key, stored(c.score), c.member);
      }
      const results = await multi.exec();
      const failed = results?.find(([error]) => error);
      if (failed?.[0]) throw failed[0];
    },
    async ranked(key, offset, limit) {
      if (limit <= 0) return [];
      const flat = await redis.zrange(key, offset, offset + limit - 1, 'WITHSCORES');
      const out = [];
      for (let i = 0; i < flat.length; i += 2) out.push({ member: flat[i]!, score: unstored(flat[i + 1]!) });
      return out;
    },
    async rankOf(key, member) {
      return redis.zrank(key, member);
    },
    async size(key) {
      return redis.zcard(key);
    },
    async dropSortedSets(prefix) {
      // SCAN sees full key names (ioredis prefixes commands' keys, not patterns or replies); only
      // sorted sets go, whatever else shares the prefix.
      const pattern = `${`${keyPrefix}${prefix}`.replace(/[*?[\]\\]/g, '\\$&')}*`;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000, 'TYPE', 'zset');
        cursor = next;
        const mine = keys.map((k) => k.slice(keyPrefix.length));
        if (mine.length > 0) await redis.unlink(...mine);
      } while (cursor !== '0');
    },
    async close() {
      if (subscriber) await subscriber.quit().catch(() => subscriber?.disconnect());
      // QUIT lets pending replies arrive; on a dead connection just drop it.
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
