import { describe, expect, it } from 'vitest';
import { describeCache } from '../testing/conformance/cache.ts';
import { createMemoryCache } from './memory-cache.ts';

describeCache('in process', () => createMemoryCache());

describe('memory cache', () => {
  it('expires by the clock it is given, to the millisecond', async () => {
    let now = 1_000;
    const cache = createMemoryCache({ now: () => now });
    await cache.set('k', 'v', 500);
    now = 1_499;
    expect(await cache.get('k')).toBe('v');
    now = 1_500;
    expect(await cache.get('k')).toBeNull();
    await cache.close();
  });

  it('is empty after close', async () => {
    const cache = createMemoryCache();
    await cache.set('k', 'v');
    await cache.close();
    expect(await cache.get('k')).toBeNull();
  });
});
