import { randomUUID } from 'node:crypto';
import type { EventEnvelope } from '@castie/contracts';
import { ConcurrencyError, type EventStore } from '../../index.ts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

export interface EventStoreFixture {
  store: EventStore;
  /** Opens the same store again after the test closed `store` (a process restart); absent when the adapter cannot. */
  reopen?: () => Promise<EventStore>;
  /** Closes whatever is still open and removes the data. */
  cleanup: () => Promise<void>;
}

type NewEvent = Omit<EventEnvelope, 'streamVersion'>;

/** Stream ids unique per test, so adapters on a shared server need no clean-up between tests. */
const uniqueStream = (prefix = 'castie'): string => `${prefix}-${randomUUID().replaceAll('-', '')}`;

const event = (streamId: string, type: string, data: unknown = {}): NewEvent => ({
  id: randomUUID().replaceAll('-', ''),
  type,
  schemaVersion: 1,
  streamId,
  occurredAt: '2025-01-02T03:04:05.000Z',
  actor: 'user-1',
  data,
});

/**
 * The contract every event store adapter fulfils (log-backed embedded store, MongoDB): stream
 * versions, optimistic concurrency under real concurrency, and durability across a reopen.
 */
export function describeEventStore(name: string, makeStore: () => Promise<EventStoreFixture>): void {
  describe(`event store conformance: ${name}`, () => {
    let fixture: EventStoreFixture;
    let store: EventStore;

    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
    });
    afterEach(async () => {
      await fixture.cleanup();
    });

    it('reads a stream that does not exist as version 0 without events', async () => {
      expect(await store.readStream(uniqueStream())).toEqual({ version: 0, events: [] });
    });

    it("appends to a new stream with 'no_stream' and reads the events back in order", async () => {
      const id = uniqueStream();
      const events = [event(id, 'CastieCreated', { title: 'Rain?' }), event(id, 'ForecastMade', { p: 0.7 })];
      const result = await store.appendToStream(id, events, { expectedVersion: 'no_stream' });
      expect(result.version).toBe(2);
      expect(result.positions).toHaveLength(2);
      for (const p of result.positions) expect(p.topic).toBe(store.topic);

      const read = await store.readStream(id);
      expect(read.version).toBe(2);
      expect(read.events).toEqual(events.map((e, i) => ({ ...e, streamVersion: i + 1 })));
    });

    it('numbers events 1..n across appends with the expected version', async () => {
      const id = uniqueStream();
      let version = 0;
      for (let round = 0; round < 5; round++) {
        const result = await store.appendToStream(id, [event(id, 'A', { round }), event(id, 'B', { round })], { expectedVersion: version });
        expect(result.version).toBe(version + 2);
        version = result.version;
      }
      await store.appendToStream(id, [event(id, 'C')], { expectedVersion: 'any' });
      const read = await store.readStream(id);
      expect(read.version).toBe(11);
      expect(read.events.map((e) => e.streamVersion)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
      expect(read.events.map((e) => e.data)).toEqual([...Array.from({ length: 5 }, (_, round) => [{ round }, { round }]).flat(), {}]);
    });

    it('reads every event of a stream read between its appends and while one lands', async () => {
      const id = uniqueStream();
      await store.appendToStream(id, [event(id, 'A')], { expectedVersion: 'no_stream' });
      expect((await store.readStream(id)).version).toBe(1);
      await store.appendToStream(id, [event(id, 'B')], { expectedVersion: 1 });
      expect((await store.readStream(id)).events.map((e) => e.type)).toEqual(['A', 'B']);
      // A read racing an append sees the stream before or after it; the next read sees it after.
      const other = uniqueStream();
      await store.appendToStream(other, [event(other, 'A')], { expectedVersion: 'no_stream' });
      const [raced] = await Promise.all([store.readStream(other), store.appendToStream(other, [event(other, 'B')], { expectedVersion: 1 })]);
      expect(raced.events.map((e) => e.type)).toEqual(['A', 'B'].slice(0, raced.version));
      expect((await store.readStream(other)).events.map((e) => e.type)).toEqual(['A', 'B']);
      await store.appendToStream(id, [event(id, 'C')], { expectedVersion: 2 });
      expect((await store.readStream(id)).events.map((e) => [e.type, e.streamVersion])).toEqual([['A', 1], ['B', 2], ['C', 3]]);
    });

    it('reads only the events after a version the stream had, with the stream\'s own version', async () => {
      const id = uniqueStream();
      await store.appendToStream(id, [event(id, 'A'), event(id, 'B'), event(id, 'C')], { expectedVersion: 'no_stream' });
      await store.appendToStream(id, [event(id, 'D')], { expectedVersion: 3 });
      const after = async (afterVersion: number) => {
        const read = await store.readStream(id, { afterVersion });
        return [read.version, read.events.map((e) => [e.type, e.streamVersion])];
      };
      const expected = [
        [4, [['A', 1], ['B', 2], ['C', 3], ['D', 4]]],
        [4, [['B', 2], ['C', 3], ['D', 4]]],
        [4, [['C', 3], ['D', 4]]],
        [4, [['D', 4]]],
        [4, []],
      ];
      // At once (appends just landed), a moment later, and once the whole stream was read.
      expect(await Promise.all([0, 1, 2, 3, 4].map(after))).toEqual(expected);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await Promise.all([0, 1, 2, 3, 4].map(after))).toEqual(expected);
      await store.readStream(id);
      expect(await Promise.all([0, 1, 2, 3, 4].map(after))).toEqual(expected);
      await store.appendToStream(id, [event(id, 'E')], { expectedVersion: 4 });
      expect(await after(4)).toEqual([5, [['E', 5]]]);
      if (!fixture.reopen) return;
      // Reopened (a restart): from what the store kept on disk alone.
      await store.close();
      store = await fixture.reopen();
      expect(await Promise.all([1, 2, 4, 5].map(after))).toEqual([
        [5, [['B', 2], ['C', 3], ['D', 4], ['E', 5]]],
        [5, [['C', 3], ['D', 4], ['E', 5]]],
        [5, [['E', 5]]],
        [5, []],
      ]);
      // Appended to by a store that read it only after versions (a command on a state its handler kept).
      await store.appendToStream(id, [event(id, 'F')], { expectedVersion: 5 });
      expect(await Promise.all([5, 6].map(after))).toEqual([
        [6, [['F', 6]]],
        [6, []],
      ]);
      await expect(store.appendToStream(id, [event(id, 'late')], { expectedVersion: 5 })).rejects.toBeInstanceOf(ConcurrencyError);
    });

    it('rejects a wrong expected version with ConcurrencyError and appends nothing', async () => {
      const id = uniqueStream();
      await store.appendToStream(id, [event(id, 'A')], { expectedVersion: 'no_stream' });

      await expect(store.appendToStream(id, [event(id, 'B')], { expectedVersion: 'no_stream' })).rejects.toBeInstanceOf(ConcurrencyError);
      const stale = await store.appendToStream(id, [event(id, 'B')], { expectedVersion: 3 }).catch((err: unknown) => err);
      expect(stale).toBeInstanceOf(ConcurrencyError);
      expect(stale).toMatchObject({ streamId: id, expected: 3, actual: 1 });
      const missing = uniqueStream();
      await expect(store.appendToStream(missing, [event(missing, 'B')], { expectedVersion: 1 })).rejects.toBeInstanceOf(ConcurrencyError);
      expect((await store.readStream(id)).version).toBe(1);
    });

    it('lets exactly one of 12 concurrent appends with the same expected version win', async () => {
      const id = uniqueStream();
      await store.appendToStream(id, [event(id, 'CastieCreated')], { expectedVersion: 'no_stream' });
      const attempts = Array.from({ length: 12 }, (_, user) => event(id, 'ForecastMade', { user }));
      const results = await Promise.allSettled(attempts.map((e) => store.appendToStream(id, [e], { expectedVersion: 1 })));

      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConcurrencyError);
      const read = await store.readStream(id);
      expect(read.version).toBe(2);
      const winner = attempts[results.findIndex((r) => r.status === 'fulfilled')]!;
      expect(read.events[1]).toEqual({ ...winner, streamVersion: 2 });
    });

    it('appends to 200 different streams concurrently', async () => {
      const ids = Array.from({ length: 200 }, () => uniqueStream('forecast'));
      const results = await Promise.all(
        ids.map((id, user) => store.appendToStream(id, [event(id, 'ForecastMade', { user })], { expectedVersion: 'no_stream' })),
      );
      expect(results.every((r) => r.version === 1)).toBe(true);
      const reads = await Promise.all(ids.map((id) => store.readStream(id)));
      reads.forEach((read, user) => expect(read.events.map((e) => e.data)).toEqual([{ user }]));
    });

    it('rejects an invalid event and leaves the stream free for the next append', async () => {
      const id = uniqueStream();
      await expect(store.appendToStream(id, [{ ...event(id, 'A'), occurredAt: 'yesterday' }], { expectedVersion: 'no_stream' })).rejects.toThrow();
      await expect(store.appendToStream(id, [event(uniqueStream(), 'A')], { expectedVersion: 'no_stream' })).rejects.toThrow();
      expect((await store.readStream(id)).version).toBe(0);
      expect((await store.appendToStream(id, [event(id, 'A')], { expectedVersion: 'no_stream' })).version).toBe(1);
    });

    it('restores every stream when reopened', async (context) => {
      if (!fixture.reopen) return context.skip();
      const ids = Array.from({ length: 20 }, () => uniqueStream());
      await Promise.all(ids.map((id) => store.appendToStream(id, [event(id, 'A'), event(id, 'B')], { expectedVersion: 'no_stream' })));
      await store.appendToStream(ids[0]!, [event(ids[0]!, 'C')], { expectedVersion: 2 });
      const before = await Promise.all(ids.map((id) => store.readStream(id)));
      await store.close();

      const reopened = await fixture.reopen();
      expect(await Promise.all(ids.map((id) => reopened.readStream(id)))).toEqual(before);
      await expect(reopened.appendToStream(ids[0]!, [event(ids[0]!, 'D')], { expectedVersion: 2 })).rejects.toBeInstanceOf(ConcurrencyError);
      expect((await reopened.appendToStream(ids[0]!, [event(ids[0]!, 'D')], { expectedVersion: 3 })).version).toBe(4);
    });
  });
}
