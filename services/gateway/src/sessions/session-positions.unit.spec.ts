import { createMemoryCache } from '@castie/platform/embedded/memory-cache';
import type { Cache } from '@castie/platform';
import { describe, expect, it } from 'vitest';
import { SessionPositions } from './session-positions.ts';

describe('session positions', () => {
  it('keeps the highest offset of every partition when one user writes concurrently', async () => {
    const inner = createMemoryCache();
    // A cache that answers slowly, as Redis over the network does: the value is read when asked
    // and arrives later, so concurrent read-merge-writes interleave.
    const slow: Cache = {
      get: async (k) => {
        const value = await inner.get(k);
        await new Promise((r) => setTimeout(r, 5));
        return value;
      },
      set: (k, v, ttl) => inner.set(k, v, ttl),
      del: (k) => inner.del(k),
      increment: (k, ttl) => inner.increment(k, ttl),
      ttl: (k) => inner.ttl(k),
      publish: (c, m) => inner.publish(c, m),
      subscribe: (c, f) => inner.subscribe(c, f),
      close: () => inner.close(),
    };
    const sessions = new SessionPositions(slow);
    await Promise.all([
      sessions.add('u1', [{ topic: 'groups', partition: 0, offset: 7 }]),
      sessions.add('u1', [{ topic: 'social', partition: 0, offset: 3 }]),
      sessions.add('u1', [{ topic: 'groups', partition: 0, offset: 5 }]),
    ]);
    expect(await sessions.get('u1')).toEqual(
      expect.arrayContaining([
        { topic: 'groups', partition: 0, offset: 7 },
        { topic: 'social', partition: 0, offset: 3 },
      ]),
    );
    expect(await sessions.get('u1')).toHaveLength(2);
    await inner.close();
  });
});
