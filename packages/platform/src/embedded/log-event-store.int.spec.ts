import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEnvelopeSchema, type EventEnvelope } from '@castie/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { ConcurrencyError } from '../ports/event-store.ts';
import { describeEventStore } from '../testing/conformance/event-store.ts';
import type { LogRecord } from '../ports/event-log.ts';
import { createFileEventLog, type FileEventLog } from './file-event-log.ts';
import { createLogEventStore, streamIndexPath } from './log-event-store.ts';

const TOPIC = 'casties';
const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'castie-store-'));

describeEventStore('log event store on the file log', async () => {
  const dir = await tempDir();
  let log = await createFileEventLog({ dir });
  return {
    store: await createLogEventStore({ log, topic: TOPIC }),
    reopen: async () => {
      await log.close();
      log = await createFileEventLog({ dir });
      return createLogEventStore({ log, topic: TOPIC });
    },
    cleanup: async () => {
      await log.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

/** An event at a version, as the store writes it: the schema's key order. */
const asWritten = (e: Omit<EventEnvelope, 'streamVersion'>, streamVersion: number) => JSON.stringify(EventEnvelopeSchema.parse({ ...e, streamVersion }));
/** The same with its version last: JSON an event store never writes, read all the same. */
const reordered = (e: Omit<EventEnvelope, 'streamVersion'>, streamVersion: number) => JSON.stringify({ ...e, streamVersion });
const event = (streamId: string, data: unknown): Omit<EventEnvelope, 'streamVersion'> => ({
  id: randomUUID().replaceAll('-', ''),
  type: 'ForecastMade',
  schemaVersion: 1,
  streamId,
  occurredAt: '2025-01-02T03:04:05.000Z',
  actor: 'user-1',
  data,
});

describe('log event store on the file log', () => {
  let dir: string;
  let log: FileEventLog;
  afterEach(async () => {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('publishes each event to the topic, keyed by stream id, at the positions it returns', async () => {
    dir = await tempDir();
    log = await createFileEventLog({ dir });
    const store = await createLogEventStore({ log, topic: TOPIC });
    const { positions } = await store.appendToStream('castie-1', [event('castie-1', 1), event('castie-1', 2)], { expectedVersion: 'no_stream' });

    const seen: LogRecord[] = [];
    const subscription = await log.subscribe({ group: 'feed', topics: [TOPIC], handle: async (records) => void seen.push(...records) });
    expect(await subscription.waitFor(positions, 5_000)).toBe(true);
    await subscription.stop();
    expect(seen.map((r) => [r.offset, r.key, (JSON.parse(r.value) as EventEnvelope).streamVersion])).toEqual([
      [positions[0]!.offset, 'castie-1', 1],
      [positions[1]!.offset, 'castie-1', 2],
    ]);
  });

  it('hands out the right versions when an append to a stream, or to another, lands while the stream is read', async () => {
    dir = await tempDir();
    log = await createFileEventLog({ dir });
    const first = await createLogEventStore({ log, topic: TOPIC });
    for (const s of ['castie-a', 'castie-b']) for (let v = 0; v < 3; v++) await first.appendToStream(s, [event(s, v)], { expectedVersion: v === 0 ? 'no_stream' : v });
    await first.close();
    // The log's reads wait for a gate, so that appends land while a stream is read.
    let gate = Promise.resolve();
    const gated: FileEventLog = Object.create(log, { read: { value: async (topic: string, from: number, max: number) => (await gate, log.read(topic, from, max)) } });
    // A store that has read none of the streams yet (its recent streams are empty).
    const store = await createLogEventStore({ log: gated, topic: TOPIC, indexPath: join(dir, 'second.streams.db') });
    for (const [read, appended] of [['castie-a', 'castie-a'], ['castie-b', 'castie-a']] as const) {
      let open!: () => void;
      gate = new Promise((resolve) => (open = resolve));
      const reading = store.readStream(read);
      await store.appendToStream(appended, [event(appended, 'meanwhile')], { expectedVersion: 'any' });
      open();
      const got = await reading;
      expect(got.version).toBe(got.events.length);
    }
    // castie-a: 3 events and 2 appended meanwhile; castie-b: its 3.
    for (const [s, version] of [['castie-a', 5], ['castie-b', 3]] as const) {
      expect((await store.readStream(s)).events.length).toBe(version);
      expect((await store.appendToStream(s, [event(s, 'next')], { expectedVersion: version })).version).toBe(version + 1);
      await expect(store.appendToStream(s, [event(s, 'late')], { expectedVersion: version })).rejects.toBeInstanceOf(ConcurrencyError);
    }
    await store.close();
  });

  it('refuses reads and appends once closed, those of streams it holds in memory too', async () => {
    dir = await tempDir();
    log = await createFileEventLog({ dir });
    const store = await createLogEventStore({ log, topic: TOPIC });
    await store.appendToStream('castie-1', [event('castie-1', 1)], { expectedVersion: 'no_stream' });
    expect((await store.readStream('castie-1')).version).toBe(1);
    await store.close();
    for (const read of [() => store.readStream('castie-1'), () => store.readStream('castie-1', { afterVersion: 1 }), () => store.readStream('castie-2')]) await expect(read()).rejects.toThrow(/closed/);
    await expect(store.appendToStream('castie-1', [event('castie-1', 2)], { expectedVersion: 1 })).rejects.toThrow(/closed/);
  });

  it('closing while appends to one stream wait behind each other: the one in flight lands, the waiting one is refused, nothing fails later', async () => {
    dir = await tempDir();
    log = await createFileEventLog({ dir });
    const store = await createLogEventStore({ log, topic: TOPIC, backgroundCheckpoints: false });
    await store.appendToStream('castie-1', [event('castie-1', 1)], { expectedVersion: 'no_stream' });
    const uncaught: unknown[] = [];
    const record = (error: unknown) => void uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      const inFlight = store.appendToStream('castie-1', [event('castie-1', 2)], { expectedVersion: 1 });
      const waiting = store.appendToStream('castie-1', [event('castie-1', 3)], { expectedVersion: 'any' });
      const [landed, refused, closed] = await Promise.allSettled([inFlight, waiting, store.close()]);
      // The index's rows of the appends are written on a later turn: give it that turn.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(landed).toMatchObject({ status: 'fulfilled', value: { version: 2 } });
      expect(refused.status).toBe('rejected');
      expect(String((refused as PromiseRejectedResult).reason)).toMatch(/closed/);
      expect(closed.status).toBe('fulfilled');
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', record);
    }
    // What was acknowledged is there when the log is opened again, and only that.
    await log.close();
    log = await createFileEventLog({ dir });
    const reopened = await createLogEventStore({ log, topic: TOPIC, backgroundCheckpoints: false });
    expect((await reopened.readStream('castie-1')).events.map((e) => e.data)).toEqual([1, 2]);
    await reopened.close();
  });

  it('replays a topic larger than one batch into the same streams', async () => {
    dir = await tempDir();
    log = await createFileEventLog({ dir });
    const store = await createLogEventStore({ log, topic: TOPIC });
    const streams = Array.from({ length: 60 }, (_, i) => `user-${i}`);
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        streams.map((id) => store.appendToStream(id, Array.from({ length: 12 }, (_, n) => event(id, { round, n })), { expectedVersion: round * 12 })),
      );
    }
    await log.close();

    log = await createFileEventLog({ dir });
    const replayed = await createLogEventStore({ log, topic: TOPIC });
    for (const id of streams) {
      const { version, events } = await replayed.readStream(id);
      expect(version).toBe(120);
      expect(events.map((e) => e.data)).toEqual(Array.from({ length: 120 }, (_, i) => ({ round: Math.floor(i / 12), n: i % 12 })));
    }
  });

  // The head of what the store writes is read without parsing the rest (peekEnvelope); other text is parsed whole.
  it.each([
    ['as the store writes it', asWritten],
    ['with its keys in another order', reordered],
  ])('refuses to start on a topic holding something that is not the next event of its stream (%s)', async (_, write) => {
    for (const build of [false, true]) {
      dir = await tempDir();
      log = await createFileEventLog({ dir });
      const store = await createLogEventStore({ log, topic: TOPIC });
      let open = true;
      try {
        await store.appendToStream('castie-1', [event('castie-1', 1)], { expectedVersion: 'no_stream' });
        // Caught up record by record on the index that store made, or a new index built whole.
        if (build) {
          await store.close();
          open = false;
          for (const suffix of ['', '-wal', '-shm']) await rm(`${streamIndexPath(dir, TOPIC)}${suffix}`, { force: suffix !== '' });
        }
        await log.append(TOPIC, [{ key: 'castie-1', value: write(event('castie-1', 2), 5) }]);
        await expect(createLogEventStore({ log, topic: TOPIC })).rejects.toThrow(/casties@0:1: .*does not follow version 1/);
      } finally {
        if (open) await store.close();
        await log.close();
        await rm(dir, { recursive: true, force: true });
      }
    }
  });

  it('indexes at open what the log holds beyond its index (a crash between the log and the index)', async () => {
    dir = await tempDir();
    log = await createFileEventLog({ dir });
    const store = await createLogEventStore({ log, topic: TOPIC });
    await store.appendToStream('castie-1', [event('castie-1', 1)], { expectedVersion: 'no_stream' });
    await store.close();
    // Durable in the log, never indexed: what a crash right after the append leaves behind.
    await log.append(TOPIC, [{ key: 'castie-1', value: asWritten(event('castie-1', 2), 2) }]);
    await log.append(TOPIC, [{ key: 'castie-2', value: reordered(event('castie-2', 3), 1) }]);
    const reopened = await createLogEventStore({ log, topic: TOPIC });
    expect((await reopened.readStream('castie-1')).events.map((e) => [e.streamVersion, e.data])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    await expect(reopened.appendToStream('castie-1', [event('castie-1', 9)], { expectedVersion: 1 })).rejects.toBeInstanceOf(ConcurrencyError);
    expect((await reopened.appendToStream('castie-2', [event('castie-2', 4)], { expectedVersion: 1 })).version).toBe(2);
    await reopened.close();
  });

  it('opened on an index, knows every stream of it and those appended meanwhile: none reads as new, a new one does', async () => {
    dir = await tempDir();
    log = await createFileEventLog({ dir });
    // More rows than it learns in one turn (1,000), straight into the log: a stream longer than a
    // turn, then many of one event; the first open indexes them.
    const long = Array.from({ length: 7_000 }, (_, i) => ({ key: 'b-long', value: JSON.stringify({ ...event('b-long', i), streamVersion: i + 1 }) }));
    const ids = Array.from({ length: 12_345 }, (_, i) => `forecast-${i}`);
    await log.append(TOPIC, [...long, ...ids.map((id) => ({ key: id, value: JSON.stringify({ ...event(id, id), streamVersion: 1 }) }))]);
    await (await createLogEventStore({ log, topic: TOPIC })).close();

    // Commands first, before any read: a stream it had not learned would take 'no_stream' again.
    const cold = await createLogEventStore({ log, topic: TOPIC });
    await cold.streamsKnown();
    for (const id of ['b-long', 'forecast-0', 'forecast-6000', 'forecast-12344']) {
      await expect(cold.appendToStream(id, [event(id, 'again')], { expectedVersion: 'no_stream' }), id).rejects.toBeInstanceOf(ConcurrencyError);
    }
    await cold.close();

    const store = await createLogEventStore({ log, topic: TOPIC });
    // While it learns the index's streams, past where it has read them ("a" sorts before the others).
    await store.appendToStream('a-late', [event('a-late', 'late')], { expectedVersion: 'no_stream' });
    await store.streamsKnown();
    for (const id of [...ids, 'a-late']) expect((await store.readStream(id)).version, id).toBe(1);
    expect((await store.readStream('b-long')).version).toBe(7_000);
    expect(await store.readStream('forecast-new')).toEqual({ version: 0, events: [] });
    expect((await store.appendToStream('forecast-new', [event('forecast-new', 'first')], { expectedVersion: 'no_stream' })).version).toBe(1);
    expect((await store.readStream('forecast-new')).events.map((e) => e.data)).toEqual(['first']);
    await store.close();
  });

  it('hands what it knows of its streams to the next open; a tail it never saw, or appends after a crash, are known all the same', async () => {
    dir = await tempDir();
    log = await createFileEventLog({ dir });
    const ids = Array.from({ length: 3_000 }, (_, i) => `forecast-${i}`);
    await log.append(TOPIC, ids.map((id) => ({ key: id, value: JSON.stringify({ ...event(id, id), streamVersion: 1 }) })));
    await (await createLogEventStore({ log, topic: TOPIC })).close();
    // Durable in the log after the close, never indexed (a crash right after an append).
    await log.append(TOPIC, [{ key: 'tail-1', value: JSON.stringify({ ...event('tail-1', 't'), streamVersion: 1 }) }]);

    const first = await createLogEventStore({ log, topic: TOPIC });
    await first.streamsKnown();
    for (const id of ['forecast-0', 'forecast-2999', 'tail-1']) {
      await expect(first.appendToStream(id, [event(id, 'again')], { expectedVersion: 'no_stream' }), id).rejects.toBeInstanceOf(ConcurrencyError);
    }
    await first.appendToStream('after-open', [event('after-open', 1)], { expectedVersion: 'no_stream' });
    await new Promise((resolve) => setImmediate(resolve));
    // `first` never closes (a crash): the next open cannot take what `first` knew.
    const second = await createLogEventStore({ log, topic: TOPIC });
    await second.streamsKnown();
    for (const id of ['forecast-0', 'forecast-2999', 'tail-1', 'after-open']) {
      await expect(second.appendToStream(id, [event(id, 'again')], { expectedVersion: 'no_stream' }), id).rejects.toBeInstanceOf(ConcurrencyError);
    }
    expect((await second.readStream('after-open')).version).toBe(1);
    await second.close();
    await first.close();
  });

  it('two stores appending on one index (which must not be, but nothing stops it): the next open knows the streams of both', async () => {
    dir = await tempDir();
    log = await createFileEventLog({ dir });
    await (await createLogEventStore({ log, topic: TOPIC })).close();
    const one = await createLogEventStore({ log, topic: TOPIC });
    const other = await createLogEventStore({ log, topic: TOPIC });
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    // In turns, each indexed before the next: `other`'s stream lands between two of `one`'s.
    await one.appendToStream('x', [event('x', 1)], { expectedVersion: 'no_stream' });
    await turn();
    await other.appendToStream('y', [event('y', 1)], { expectedVersion: 'no_stream' });
    await turn();
    await one.appendToStream('z', [event('z', 1)], { expectedVersion: 'no_stream' });
    await turn();
    await one.close();
    await other.close();
    const next = await createLogEventStore({ log, topic: TOPIC });
    await next.streamsKnown();
    for (const id of ['x', 'y', 'z']) await expect(next.appendToStream(id, [event(id, 'again')], { expectedVersion: 'no_stream' }), id).rejects.toBeInstanceOf(ConcurrencyError);
    await next.close();
  });

  it('refuses a stream id the log could not give back as it is (a lone surrogate)', async () => {
    dir = await tempDir();
    log = await createFileEventLog({ dir });
    const store = await createLogEventStore({ log, topic: TOPIC });
    const id = 'castie-\ud800';
    await expect(store.appendToStream(id, [event(id, 1)], { expectedVersion: 'no_stream' })).rejects.toThrow(/not well-formed Unicode/);
    expect((await log.endOffsets(TOPIC)).get(0) ?? 0).toBe(0);
    await store.close();
  });

  it('rebuilds a lost stream index from the log, and opens again without reading the log', async () => {
    dir = await tempDir();
    log = await createFileEventLog({ dir });
    const store = await createLogEventStore({ log, topic: TOPIC });
    for (let i = 0; i < 30; i++) await store.appendToStream(`s-${i % 3}`, [event(`s-${i % 3}`, i)], { expectedVersion: Math.floor(i / 3) || 'no_stream' });
    await store.close();
    for (const suffix of ['', '-wal', '-shm']) await rm(join(dir, `${TOPIC}.streams.db${suffix}`), { force: true });
    const rebuilt = await createLogEventStore({ log, topic: TOPIC });
    expect((await rebuilt.readStream('s-1')).events.map((e) => e.data)).toEqual([1, 4, 7, 10, 13, 16, 19, 22, 25, 28]);
    await rebuilt.close();
    // A log that cannot be read proves the next open does not read it: the index knows it all.
    const unreadable = { ...log, read: () => Promise.reject(new Error('the log was read')) };
    const reopened = await createLogEventStore({ log: unreadable, topic: TOPIC });
    expect(await reopened.appendToStream('s-2', [event('s-2', 'x')], { expectedVersion: 10 })).toMatchObject({ version: 11 });
    await reopened.close();
  });
});
