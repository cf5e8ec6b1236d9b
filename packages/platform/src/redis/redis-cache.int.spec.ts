import { randomUUID } from 'node:crypto';
import { afterAll, describe } from 'vitest';
import { describeCache } from '../testing/conformance/cache.ts';
import { testRedis } from '../testing/servers/redis.ts';
import { createRedisCache } from './redis-cache.ts';

const redis = await testRedis();

describe.skipIf(!redis.url)(`redis cache${redis.url ? '' : ` (skipped: ${redis.reason})`}`, () => {
  afterAll(() => redis.stop());
  describeCache('redis', () => createRedisCache({ url: redis.url!, keyPrefix: `castie-test:${randomUUID().slice(0, 8)}:` }));
});
