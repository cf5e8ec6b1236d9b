import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { describeCache } from '../testing/conformance/cache.ts';
import { describeSortedSets } from '../testing/conformance/sorted-sets.ts';
import { testRedis } from '../testing/servers/redis.ts';
import { createRedisCache } from './redis-cache.ts';

const redis = await testRedis();

describe.skipIf(!redis.url)(`redis cache${redis.url ? '' : ` (skipped: ${redis.reason})`}`, () => {
  afterAll(() => redis.stop());
  it('a message published through one connection reaches the subscribers of another with the same prefix, not of another prefix (several gateways)', async () => {
    const prefix = `castie-test:${randomUUID().slice(0, 8)}:`;
    const [first, second, elsewhere] = [createRedisCache({ url: redis.url!, keyPrefix: prefix }), createRedisCache({ url: redis.url!, keyPrefix: prefix }), createRedisCache({ url: redis.url!, keyPrefix: `${prefix}x:` })];
    try {
      const got: string[] = [];
      const strayed: string[] = [];
      await second.subscribe('changes', (m) => got.push(m));
      await elsewhere.subscribe('changes', (m) => strayed.push(m));
      await first.publish('changes', 'from the first gateway');
      for (let i = 0; i < 100 && got.length === 0; i++) await sleep(10);
      expect(got).toEqual(['from the first gateway']);
      expect(strayed).toEqual([]);
    } finally {
      await Promise.all([first.close(), second.close(), elsewhere.close()]);
    }
  });
  describeCache('redis', () => createRedisCache({ url: redis.url!, keyPrefix: `castie-test:${randomUUID().slice(0, 8)}:` }));
  describeSortedSets('redis', async () => {
    const cache = createRedisCache({ url: redis.url!, keyPrefix: `castie-test:${randomUUID().slice(0, 8)}:` });
    return { sets: cache, close: () => cache.close() };
  });
});
