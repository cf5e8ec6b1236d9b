import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cache } from '../../index.ts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * The contract every cache adapter fulfils (in process, Redis). `makeCache` gives a cache per
 * test; keys are unique per test, so a shared server works. Expiry is checked in real time with
 * short TTLs.
 */
export function describeCache(name: string, makeCache: () => Cache | Promise<Cache>): void {
  describe(`cache conformance: ${name}`, () => {
    let cache: Cache;
    let prefix: string;
    const used = new Set<string>();
    beforeEach(async () => {
      cache = await makeCache();
      prefix = `t${randomUUID().slice(0, 8)}:`;
    });
    afterEach(async () => {
      // Leave nothing behind on a shared server.
      await Promise.all([...used].map((k) => cache.del(k)));
      used.clear();
      await cache.close();
    });
    const key = (k: string): string => {
      used.add(prefix + k);
      return prefix + k;
    };

    it('answers null for an unknown key', async () => {
      expect(await cache.get(key('missing'))).toBeNull();
    });

    it('returns what was set, and the last value set', async () => {
      await cache.set(key('a'), 'one');
      expect(await cache.get(key('a'))).toBe('one');
      await cache.set(key('a'), 'two');
      expect(await cache.get(key('a'))).toBe('two');
    });

    it('keeps values exactly: empty, unicode, long', async () => {
      const long = 'x'.repeat(100_000);
      await cache.set(key('empty'), '');
      await cache.set(key('unicode'), 'Tromsø ✓ 🎯');
      await cache.set(key('long'), long);
      expect(await cache.get(key('empty'))).toBe('');
      expect(await cache.get(key('unicode'))).toBe('Tromsø ✓ 🎯');
      expect(await cache.get(key('long'))).toBe(long);
    });

    it('keeps keys apart', async () => {
      await cache.set(key('session:1'), 'a');
      await cache.set(key('session:10'), 'b');
      expect(await cache.get(key('session:1'))).toBe('a');
      expect(await cache.get(key('session:10'))).toBe('b');
    });

    it('deletes a key, and deleting an unknown key is not an error', async () => {
      await cache.set(key('a'), 'one');
      await cache.set(key('b'), 'two');
      await cache.del(key('a'));
      await cache.del(key('never'));
      expect(await cache.get(key('a'))).toBeNull();
      expect(await cache.get(key('b'))).toBe('two');
    });

    it('forgets a value once its TTL has passed', async () => {
      await cache.set(key('short'), 'v', 300);
      await cache.set(key('long'), 'v', 60_000);
      await cache.set(key('forever'), 'v');
      expect(await cache.get(key('short'))).toBe('v');
      await sleep(700);
      expect(await cache.get(key('short'))).toBeNull();
      expect(await cache.get(key('long'))).toBe('v');
      expect(await cache.get(key('forever'))).toBe('v');
    });

    it('a set replaces the TTL: without one the value stays, with one it expires', async () => {
      await cache.set(key('kept'), 'old', 300);
      await cache.set(key('kept'), 'new');
      await cache.set(key('expiring'), 'old');
      await cache.set(key('expiring'), 'new', 300);
      await sleep(700);
      expect(await cache.get(key('kept'))).toBe('new');
      expect(await cache.get(key('expiring'))).toBeNull();
    });

    it('a TTL of zero or less leaves nothing stored', async () => {
      await cache.set(key('a'), 'old');
      await cache.set(key('a'), 'new', 0);
      await cache.set(key('b'), 'v', -5);
      expect(await cache.get(key('a'))).toBeNull();
      expect(await cache.get(key('b'))).toBeNull();
    });

    it('serves concurrent writes and reads', async () => {
      const keys = Array.from({ length: 50 }, (_, i) => key(`k${i}`));
      await Promise.all(keys.map((k, i) => cache.set(k, `v${i}`, 60_000)));
      expect(await Promise.all(keys.map((k) => cache.get(k)))).toEqual(keys.map((_, i) => `v${i}`));
    });

    it('counts up from 1, concurrently without losing a step, and tells the time left', async () => {
      expect(await cache.ttl(key('none'))).toBeNull();
      expect(await cache.increment(key('c'), 60_000)).toBe(1);
      const counts = await Promise.all(Array.from({ length: 20 }, () => cache.increment(key('c'), 60_000)));
      expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
      // Read as text, as Redis answers GET of a counter.
      expect(await cache.get(key('c'))).toBe('21');
      const left = await cache.ttl(key('c'));
      expect(left).toBeGreaterThan(50_000);
      expect(left).toBeLessThanOrEqual(60_000);
      await cache.set(key('forever'), 'v');
      expect(await cache.ttl(key('forever'))).toBeNull();
    });

    it('answers at once (inProcess, where it offers it) exactly what its promises answer', async (context) => {
      const now = cache.inProcess;
      if (!now) return context.skip('this adapter answers across a network: no synchronous reads');
      expect(now.get(key('missing'))).toBeNull();
      await cache.set(key('a'), 'v1');
      expect(now.get(key('a'))).toBe('v1');
      await cache.set(key('short'), 'v', 150);
      expect(now.ttl(key('a'))).toBeNull();
      expect(now.ttl(key('short'))).toBeGreaterThan(0);
      // Counters are one counter, whichever way they are counted.
      expect(now.increment(key('c'), 400)).toBe(1);
      expect(await cache.increment(key('c'), 400)).toBe(2);
      expect(now.increment(key('c'), 400)).toBe(3);
      expect(now.get(key('c'))).toBe('3');
      const [sync, async] = [now.ttl(key('c'))!, (await cache.ttl(key('c')))!];
      expect(sync).toBeGreaterThan(0);
      expect(Math.abs(sync - async)).toBeLessThan(50);
      await sleep(450);
      expect(now.get(key('short'))).toBeNull();
      expect(now.ttl(key('short'))).toBeNull();
      expect(now.increment(key('c'), 400)).toBe(1);
    });

    it('counts its writes (inProcess, where it offers it): every set and del, and no increment', async (context) => {
      const now = cache.inProcess;
      if (!now) return context.skip('this adapter answers across a network: no synchronous reads');
      const before = now.writes;
      now.increment(key('n'), 1000);
      await cache.increment(key('n'), 1000);
      expect(now.get(key('n'))).toBe('2');
      expect(now.writes).toBe(before);
      await cache.set(key('s'), 'v');
      expect(now.writes).toBe(before + 1);
      // The same value again, a value that expires at once, and a key that is not there: writes all.
      await cache.set(key('s'), 'v');
      await cache.set(key('s'), 'w', 0);
      await cache.del(key('absent'));
      expect(now.writes).toBe(before + 4);
    });

    it('a counter expires with its window, which later increments do not extend, and starts again', async () => {
      expect(await cache.increment(key('w'), 400)).toBe(1);
      await sleep(250);
      expect(await cache.increment(key('w'), 400)).toBe(2);
      await sleep(300);
      expect(await cache.increment(key('w'), 400)).toBe(1);
    });

    it('delivers a published message to every subscriber of its channel, in order, and to no other channel', async () => {
      const channel = `${prefix}ch`;
      const a: string[] = [];
      const b: string[] = [];
      const other: string[] = [];
      await cache.subscribe(channel, (m) => a.push(m));
      await cache.subscribe(channel, (m) => b.push(m));
      await cache.subscribe(`${prefix}other`, (m) => other.push(m));
      for (const m of ['one', 'two', 'Tromsø ✓']) await cache.publish(channel, m);
      await eventuallyEqual(() => [a, b], [['one', 'two', 'Tromsø ✓'], ['one', 'two', 'Tromsø ✓']]);
      expect(other).toEqual([]);
    });

    it('stops delivering to a subscription once it ends, and keeps the others', async () => {
      const channel = `${prefix}ch`;
      const a: string[] = [];
      const b: string[] = [];
      const stopA = await cache.subscribe(channel, (m) => a.push(m));
      await cache.subscribe(channel, (m) => b.push(m));
      await cache.publish(channel, 'first');
      await eventuallyEqual(() => [a, b], [['first'], ['first']]);
      await stopA();
      await cache.publish(channel, 'second');
      await eventuallyEqual(() => b, ['first', 'second']);
      await sleep(50);
      expect(a).toEqual(['first']);
    });

    it('publishing with nobody subscribed is not an error, and is not kept for later subscribers', async () => {
      const channel = `${prefix}ch`;
      await cache.publish(channel, 'lost');
      const got: string[] = [];
      await cache.subscribe(channel, (m) => got.push(m));
      await cache.publish(channel, 'seen');
      await eventuallyEqual(() => got, ['seen']);
    });

  });
}

/** Pub/sub delivers asynchronously on a server: wait (bounded) for what is expected. */
async function eventuallyEqual(read: () => unknown, expected: unknown, timeoutMs = 2000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      expect(read()).toEqual(expected);
      return;
    } catch {
      await sleep(10);
    }
  }
  expect(read()).toEqual(expected);
}
