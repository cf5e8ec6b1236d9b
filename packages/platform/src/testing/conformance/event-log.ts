import { randomUUID } from 'node:crypto';
import type { EventLog, LogPosition, LogRecord, StartAt, Subscription } from '../../index.ts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

export interface EventLogFixture {
  log: EventLog;
  /** Opens the same log again after the test closed `log` (a process restart); absent when the adapter cannot. */
  reopen?: () => Promise<EventLog>;
  /** Closes whatever is still open and removes the data. */
  cleanup: () => Promise<void>;
}

const WAIT_MS = 10_000;

/** Names unique per test, so adapters on a shared server need no clean-up between tests. */
const unique = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

const lastPerPartition = (positions: readonly LogPosition[]): LogPosition[] => [
  ...new Map(positions.map((p) => [p.partition, p])).values(),
];

/**
 * The contract every event log adapter fulfils (embedded file log, Kafka). `makeLog` gives a fresh
 * log per test; topics and groups are unique per test, so a shared server works.
 */
export function describeEventLog(name: string, makeLog: () => Promise<EventLogFixture>): void {
  describe(`event log conformance: ${name}`, () => {
    let fixture: EventLogFixture;
    let log: EventLog;
    const subscriptions: Subscription[] = [];

    beforeEach(async () => {
      fixture = await makeLog();
      log = fixture.log;
    });
    afterEach(async () => {
      await Promise.all(subscriptions.splice(0).map((s) => s.stop()));
      await fixture.cleanup();
    });

    /** Subscribes a group that records everything it handles. */
    async function consume(
      topics: string[],
      options: { group?: string; startAt?: StartAt; on?: (records: LogRecord[]) => Promise<void>; maxBatch?: number; via?: EventLog } = {},
    ): Promise<{ subscription: Subscription; received: LogRecord[] }> {
      const received: LogRecord[] = [];
      const { startAt } = options;
      const subscription = await (options.via ?? log).subscribe({
        group: options.group ?? unique('group'),
        topics,
        ...(startAt ? { startAt: () => startAt } : {}),
        ...(options.maxBatch ? { maxBatch: options.maxBatch } : {}),
        handle: async (records) => {
          await options.on?.(records);
          received.push(...records);
        },
      });
      subscriptions.push(subscription);
      return { subscription, received };
    }

    const values = (records: readonly { value: string }[]): string[] => records.map((r) => r.value);
    const numbered = (count: number, from = 0): { key: string; value: string }[] =>
      Array.from({ length: count }, (_, i) => ({ key: `k${(from + i) % 7}`, value: `v${from + i}` }));

    it('append resolves with positions in input order, increasing per partition', async () => {
      const topic = unique('t');
      const first = await log.append(topic, numbered(3));
      const second = await log.append(topic, numbered(2, 3));
      const all = [...first, ...second];
      expect(all).toHaveLength(5);
      for (const p of all) expect(p.topic).toBe(topic);
      const lastOffset = new Map<number, number>();
      for (const p of all) {
        expect(p.offset).toBeGreaterThan(lastOffset.get(p.partition) ?? -1);
        lastOffset.set(p.partition, p.offset);
      }
      expect(await log.append(topic, [])).toEqual([]);
    });

    it('keeps the order of records with one key', async () => {
      const topic = unique('t');
      const appended = [];
      for (let i = 0; i < 30; i++) appended.push(...(await log.append(topic, [{ key: `key-${i % 3}`, value: `${i}` }])));
      const { subscription, received } = await consume([topic], { startAt: 'earliest' });
      expect(await subscription.waitFor(appended, WAIT_MS)).toBe(true);
      for (let k = 0; k < 3; k++) {
        const ofKey = received.filter((r) => r.key === `key-${k}`).map((r) => Number(r.value));
        expect(ofKey).toEqual(Array.from({ length: 10 }, (_, i) => i * 3 + k));
      }
    });

    it('delivers every record to a consumer group in order, with key, value and timestamp', async () => {
      const topic = unique('t');
      const before = await log.append(topic, numbered(1200));
      const { subscription, received } = await consume([topic]);
      const after = await log.append(topic, numbered(300, 1200));
      expect(await subscription.waitFor([...before, ...after], WAIT_MS)).toBe(true);
      const sorted = [...received].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
      expect(new Set(values(received)).size).toBe(1500);
      for (const p of new Set(received.map((r) => r.partition))) {
        const inPartition = received.filter((r) => r.partition === p).map((r) => r.offset);
        expect(inPartition).toEqual(sorted.filter((r) => r.partition === p).map((r) => r.offset));
      }
      const first = received.find((r) => r.value === 'v0')!;
      expect(first).toMatchObject({ topic, key: 'k0', partition: before[0]!.partition, offset: before[0]!.offset });
      expect(Math.abs(first.timestamp - Date.now())).toBeLessThan(60_000);
    });

    it('delivers everything to each of two groups', async () => {
      const topic = unique('t');
      const positions = await log.append(topic, numbered(50));
      const a = await consume([topic]);
      const b = await consume([topic]);
      const more = await log.append(topic, numbered(10, 50));
      expect(await a.subscription.waitFor([...positions, ...more], WAIT_MS)).toBe(true);
      expect(await b.subscription.waitFor([...positions, ...more], WAIT_MS)).toBe(true);
      expect(values(a.received).sort()).toEqual(values(b.received).sort());
      expect(a.received).toHaveLength(60);
    });

    it('resumes a group after its committed position, also after a restart', async () => {
      const topic = unique('t');
      const group = unique('group');
      const first = await log.append(topic, numbered(20));
      const one = await consume([topic], { group, startAt: 'committed' });
      expect(await one.subscription.waitFor(first, WAIT_MS)).toBe(true);
      await one.subscription.stop();
      const second = await log.append(topic, numbered(5, 20));

      let target = log;
      if (fixture.reopen) {
        await log.close();
        target = await fixture.reopen();
      }
      const two = await consume([topic], { group, via: target });
      expect(await two.subscription.waitFor(second, WAIT_MS)).toBe(true);
      expect(values(two.received).sort()).toEqual(values(numbered(5, 20)).sort());
      await two.subscription.stop();
      if (target !== log) await target.close();
    });

    it("replays from the start with 'earliest' and from a given offset", async () => {
      const topic = unique('t');
      const group = unique('group');
      const positions = await log.append(topic, numbered(10));
      const one = await consume([topic], { group });
      expect(await one.subscription.waitFor(positions, WAIT_MS)).toBe(true);
      await one.subscription.stop();

      const again = await consume([topic], { group, startAt: 'earliest' });
      expect(await again.subscription.waitFor(positions, WAIT_MS)).toBe(true);
      expect(values(again.received).sort()).toEqual(values(numbered(10)).sort());
      await again.subscription.stop();

      const fifth = positions[4]!;
      const received: LogRecord[] = [];
      const from = await log.subscribe({
        group: unique('group'),
        topics: [topic],
        startAt: (_t, partition) => (partition === fifth.partition ? { offset: fifth.offset } : 'earliest'),
        handle: async (records) => void received.push(...records.filter((r) => r.partition === fifth.partition)),
      });
      subscriptions.push(from);
      expect(await from.waitFor(positions, WAIT_MS)).toBe(true);
      expect(received.map((r) => r.offset)).toEqual(positions.filter((p) => p.partition === fifth.partition && p.offset >= fifth.offset).map((p) => p.offset));
    });

    it('redelivers a batch whose handler threw, then goes on', async () => {
      const topic = unique('t');
      let failures = 0;
      const { subscription, received } = await consume([topic], {
        on: async (records) => {
          if (failures < 2 && records.some((r) => r.value === 'v3')) {
            failures++;
            throw new Error('read model unavailable');
          }
        },
      });
      const positions = await log.append(topic, numbered(6));
      expect(await subscription.waitFor(positions, WAIT_MS)).toBe(true);
      expect(failures).toBe(2);
      expect(new Set(values(received))).toEqual(new Set(values(numbered(6))));
      const later = await log.append(topic, numbered(2, 6));
      expect(await subscription.waitFor(later, WAIT_MS)).toBe(true);
      expect(values(received)).toContain('v7');
    });

    it('waitFor resolves true once positions are handled, false on timeout, and ignores other topics', async () => {
      const topic = unique('t');
      const { subscription } = await consume([topic]);
      const positions = await log.append(topic, numbered(3));
      expect(await subscription.waitFor(positions, WAIT_MS)).toBe(true);
      for (const p of lastPerPartition(positions)) {
        expect(subscription.handled().get(`${p.topic}:${p.partition}`)).toBeGreaterThanOrEqual(p.offset);
      }
      const beyond = positions.map((p) => ({ ...p, offset: p.offset + 1000 }));
      const started = Date.now();
      expect(await subscription.waitFor(beyond, 150)).toBe(false);
      expect(Date.now() - started).toBeGreaterThanOrEqual(100);
      expect(await subscription.waitFor([{ topic: unique('other'), partition: 0, offset: 99 }], 150)).toBe(true);
    });

    it('waitFor wakes as soon as a later append is handled', async () => {
      const topic = unique('t');
      const { subscription, received } = await consume([topic]);
      const [first] = await log.append(topic, [{ key: 'same', value: 'early' }]);
      const waiting = subscription.waitFor([{ ...first!, offset: first!.offset + 1 }], WAIT_MS);
      // Records with one key share a partition, so the next one lands at the awaited offset.
      await log.append(topic, [{ key: 'same', value: 'late' }]);
      expect(await waiting).toBe(true);
      expect(values(received)).toEqual(['early', 'late']);
    });

    it('reports end offsets per partition', async () => {
      const topic = unique('t');
      const empty = await log.endOffsets(topic);
      expect([...empty.values()].reduce((a, b) => a + b, 0)).toBe(0);
      const positions = await log.append(topic, numbered(12));
      const ends = await log.endOffsets(topic);
      expect([...ends.values()].reduce((a, b) => a + b, 0)).toBe(12);
      for (const p of positions) expect(ends.get(p.partition)).toBeGreaterThan(p.offset);
    });
  });
}
