import { randomUUID } from 'node:crypto';
import { afterAll, describe } from 'vitest';
// Relative imports: @castie/testing depends on @castie/platform, so the reverse would be a cycle.
import { describeCache } from '../../../testing/src/conformance/cache.ts';
import { testRedis } from '../../../testing/src/servers/redis.ts';
import { createRedisCache } from './redis-cache.ts';

const redis = await testRedis();

describe.skipIf(!redis.url)(`redis cache${redis.url ? '' : ` (skipped: ${redis.reason})`}`, () => {
  afterAll(() => redis.stop());
  describeCache('redis', () => createRedisCache({ url: redis.url!, keyPrefix: `castie-test:${randomUUID().slice(0, 8)}:` }));
});
