import { createMemoryCache } from '@castie/platform/embedded/memory-cache';
import { describe, expect, it } from 'vitest';
import { cacheOver } from '../test-support/cache-over.ts';
import { SessionPositions } from './session-positions.ts';

describe('session positions', () => {
  it('keeps the highest offset of every partition when one user writes concurrently', async () => {
    const inner = createMemoryCache();
    // A cache that answers slowly, as Redis over the network does: the value is read when asked
    // and arrives later, so concurrent read-merge-writes interleave.
    const slow = cacheOver(inner, {
      get: async (k) => {
        const value = await inner.get(k);
        await new Promise((r) => setTimeout(r, 5));
        return value;
      },
    });
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
