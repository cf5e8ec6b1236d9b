import type { Cache } from '@castie/platform';

/**
 * The cache port over `inner`, with some of its calls made otherwise (slower, failing): for tests
 * of how the gateway copes with the cache it is given. It lends no synchronous reads
 * (`inProcess`), even over a cache in this process: every read goes through `get`, as over a
 * network, so a changed `get` is never bypassed.
 */
export function cacheOver(inner: Cache, changed: Partial<Pick<Cache, 'get' | 'set'>>): Cache {
  return {
    get: changed.get ?? ((key) => inner.get(key)),
    set: changed.set ?? ((key, value, ttlMs) => inner.set(key, value, ttlMs)),
    del: (key) => inner.del(key),
    increment: (key, ttlMs) => inner.increment(key, ttlMs),
    ttl: (key) => inner.ttl(key),
    publish: (channel, message) => inner.publish(channel, message),
    subscribe: (channel, onMessage) => inner.subscribe(channel, onMessage),
    close: () => inner.close(),
  };
}
