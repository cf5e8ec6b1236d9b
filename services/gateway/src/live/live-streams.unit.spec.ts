import { LIVE_CHANGES_CHANNEL, type NotificationCounts } from '@castie/contracts';
import { createMemoryCache } from '@castie/platform/embedded/memory-cache';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultLiveLimits, LiveStreams, type LiveLimits, type StreamSink } from './live-streams.ts';

/** A client connection: `reading` false is a client that stopped reading (bytes pile up). */
class FakeSink extends EventEmitter implements StreamSink {
  written: string[] = [];
  writableLength = 0;
  ended = false;
  destroyed = false;
  constructor(public reading = true) {
    super();
  }
  write(chunk: string): boolean {
    this.written.push(chunk);
    if (this.reading) return true;
    this.writableLength += Buffer.byteLength(chunk);
    return false;
  }
  end(): void {
    this.ended = true;
    this.emit('close');
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
  counts(): string[] {
    return this.written.filter((w) => w.includes('event: counts'));
  }
}

const user = (id: string) => ({ userId: id, handle: id, email: `${id}@example.com` });
const cache = createMemoryCache();
let hub: LiveStreams | null = null;
afterEach(async () => {
  await hub?.close();
  hub = null;
});

async function start(counts: (userId: string) => Promise<NotificationCounts>, limits: Partial<LiveLimits> = {}) {
  hub = new LiveStreams({ cache, counts: (u) => counts(u.userId), limits: { ...defaultLiveLimits, ...limits } });
  await hub.start();
  return hub;
}
const zero: NotificationCounts = { number_notifications: 0, needs_answer: false, number_needing_answer: 0 };

describe('live streams of one gateway', () => {
  it('drops a client that stopped reading once its unsent bytes pass the bound', async () => {
    let n = 0;
    const live = await start(async () => ({ ...zero, number_notifications: n++ }), { maxBufferedBytes: 600 });
    const slow = new FakeSink(false);
    live.open(user('u1'), slow, null);
    for (let i = 0; i < 20 && !slow.destroyed; i++) {
      await cache.publish(LIVE_CHANGES_CHANNEL, JSON.stringify({ users: ['u1'] }));
      await sleep(5);
    }
    expect(slow.destroyed).toBe(true);
    expect(live.size).toBe(0);
  });

  it('drops a client whose write waited a whole heartbeat for drain; a reading one stays', async () => {
    const live = await start(async () => zero, { heartbeatMs: 50 });
    const stalled = new FakeSink(false);
    const fine = new FakeSink(true);
    live.open(user('u1'), stalled, null);
    live.open(user('u2'), fine, null);
    await sleep(180);
    expect(stalled.destroyed).toBe(true);
    expect(fine.destroyed || fine.ended).toBe(false);
    expect(fine.written.filter((w) => w.startsWith(': heartbeat')).length).toBeGreaterThanOrEqual(2);
    expect(live.size).toBe(1);
  });

  it('reads counts once more when changes come while they are read, and sends only what differs', async () => {
    let reads = 0;
    let release: () => void = () => {};
    const live = await start(async () => {
      reads++;
      if (reads === 2) await new Promise<void>((r) => (release = r));
      return { ...zero, number_notifications: reads >= 3 ? 1 : 0 };
    });
    const sink = new FakeSink();
    live.open(user('u1'), sink, null);
    await sleep(5);
    expect(sink.counts()).toHaveLength(1);
    // Five changes while the second read is slow: one more read after it, not five.
    for (let i = 0; i < 5; i++) await cache.publish(LIVE_CHANGES_CHANNEL, JSON.stringify({ users: ['u1'] }));
    await sleep(5);
    release();
    await sleep(10);
    expect(reads).toBe(3);
    // The second read found the same counts: nothing sent; the third found new ones.
    expect(sink.counts()).toHaveLength(2);
    expect(sink.counts()[1]).toContain('id: 1.0');
  });

  it('a change for anyone (users null) reaches every open stream; a change for others reaches none', async () => {
    let n = 0;
    const live = await start(async () => ({ ...zero, number_notifications: n }));
    const a = new FakeSink();
    const b = new FakeSink();
    live.open(user('a'), a, null);
    live.open(user('b'), b, null);
    await sleep(5);
    n = 1;
    await cache.publish(LIVE_CHANGES_CHANNEL, JSON.stringify({ users: ['someone-else'] }));
    await sleep(5);
    expect([a.counts().length, b.counts().length]).toEqual([1, 1]);
    await cache.publish(LIVE_CHANGES_CHANNEL, JSON.stringify({ users: null }));
    await cache.publish(LIVE_CHANGES_CHANNEL, 'not json');
    await sleep(5);
    expect([a.counts().length, b.counts().length]).toEqual([2, 2]);
  });

  it('refuses streams beyond the total with 429, and ends every stream on close', async () => {
    const live = await start(async () => zero, { total: 2 });
    const sinks = [new FakeSink(), new FakeSink()];
    live.open(user('a'), sinks[0]!, null);
    live.open(user('b'), sinks[1]!, null);
    expect(() => live.open(user('c'), new FakeSink(), null)).toThrow(expect.objectContaining({ status: 429 }));
    await live.close();
    expect(sinks.every((s) => s.ended)).toBe(true);
    expect(live.size).toBe(0);
  });
});
