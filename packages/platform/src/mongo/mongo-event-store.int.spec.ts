import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventEnvelope } from '@castie/contracts';
import type { MongoClient } from 'mongodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeEventStore } from '../testing/conformance/event-store.ts';
import { testKafka } from '../testing/servers/kafka.ts';
import { testMongo, uniqueDatabase } from '../testing/servers/mongo.ts';
import { createFileEventLog } from '../embedded/file-event-log.ts';
import { createKafkaEventLog } from '../kafka/kafka-event-log.ts';
import type { EventLog, LogRecord } from '../ports/event-log.ts';
import type { EventStore } from '../ports/event-store.ts';
import { createMongoEventStore, RELAY_BATCH_EVENTS } from './mongo-event-store.ts';
import { connectMongo } from './mongo-document-store.ts';

const mongo = await testMongo();
const kafka = await testKafka();
const TOPIC = 'casties';
// Both describes share the servers; they stop once the file is done.
afterAll(async () => {
  await Promise.all([mongo.stop(), kafka.stop()]);
});

const event = (streamId: string, data: unknown): Omit<EventEnvelope, 'streamVersion'> => ({
  id: randomUUID().replaceAll('-', ''),
  type: 'ForecastMade',
  schemaVersion: 1,
  streamId,
  occurredAt: '2025-01-02T03:04:05.000Z',
  actor: 'user-1',
  data,
});

/** Every record of a topic up to its current end, read through a throw-away consumer group. */
async function readTopic(log: EventLog, topic: string): Promise<LogRecord[]> {
  const ends = await log.endOffsets(topic);
  const last = [...ends].filter(([, end]) => end > 0).map(([partition, end]) => ({ topic, partition, offset: end - 1 }));
  const records: LogRecord[] = [];
  const subscription = await log.subscribe({ group: `read-${randomUUID()}`, topics: [topic], startAt: () => 'earliest', handle: async (batch) => void records.push(...batch) });
  expect(await subscription.waitFor(last, 20_000)).toBe(true);
  await subscription.stop();
  return records;
}

describe.skipIf(!mongo.url)(`mongo event store${mongo.url ? ` (${mongo.reason})` : ` (skipped: ${mongo.reason})`}`, () => {
  let client: MongoClient;
  beforeAll(() => {
    client = connectMongo(mongo.url!);
  });
  afterAll(() => client.close());

  // The relay publishes to any event log: the embedded file log needs no second server.
  describeEventStore('mongodb, relayed to the file log', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'castie-mongo-store-'));
    const log = await createFileEventLog({ dir });
    const db = client.db(uniqueDatabase());
    const opened: EventStore[] = [];
    const open = async (): Promise<EventStore> => {
      const store = await createMongoEventStore({ db, topic: TOPIC, log });
      opened.push(store);
      return store;
    };
    return {
      store: await open(),
      reopen: open,
      cleanup: async () => {
        for (const store of opened) await store.close();
        await log.close();
        await db.dropDatabase();
        await rm(dir, { recursive: true, force: true });
      },
    };
  });

  describe('outbox relay', () => {
    let dir: string;
    let log: EventLog;
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    async function setUp(): Promise<{ db: ReturnType<MongoClient['db']> }> {
      dir = await mkdtemp(join(tmpdir(), 'castie-relay-'));
      log = await createFileEventLog({ dir });
      const db = client.db(uniqueDatabase());
      cleanups.push(async () => {
        await log.close();
        await db.dropDatabase();
        await rm(dir, { recursive: true, force: true });
      });
      return { db };
    }

    it('publishes each event to the topic, keyed by stream id, at the positions it returns', async () => {
      const { db } = await setUp();
      const store = await createMongoEventStore({ db, topic: TOPIC, log });
      cleanups.push(() => store.close());
      const { positions } = await store.appendToStream('castie-1', [event('castie-1', 1), event('castie-1', 2)], { expectedVersion: 'no_stream' });
      expect(positions).toHaveLength(2);
      const records = await readTopic(log, TOPIC);
      expect(records.map((r) => [r.offset, r.key, (JSON.parse(r.value) as EventEnvelope).streamVersion])).toEqual([
        [positions[0]!.offset, 'castie-1', 1],
        [positions[1]!.offset, 'castie-1', 2],
      ]);
    });

    it('publishes what was stored while the log was down, in stream order, once a relay runs again', async () => {
      const { db } = await setUp();
      const down: EventLog = { ...log, append: async () => Promise.reject(new Error('log unreachable')), close: async () => {} };
      const warnings: string[] = [];
      const first = await createMongoEventStore({ db, topic: TOPIC, log: down, publishTimeoutMs: 300, onWarning: (m) => warnings.push(m) });
      const stored = await first.appendToStream('castie-2', [event('castie-2', 'a'), event('castie-2', 'b')], { expectedVersion: 'no_stream' });
      expect(stored).toEqual({ version: 2, positions: [] });
      await first.appendToStream('castie-2', [event('castie-2', 'c')], { expectedVersion: 2 });
      await first.close();
      expect(warnings.some((w) => /not published within 300ms/.test(w))).toBe(true);
      expect(await log.endOffsets(TOPIC)).toEqual(new Map([[0, 0]]));

      const second = await createMongoEventStore({ db, topic: TOPIC, log });
      cleanups.push(() => second.close());
      const { positions } = await second.appendToStream('castie-2', [event('castie-2', 'd')], { expectedVersion: 3 });
      expect(positions).toEqual([{ topic: TOPIC, partition: 0, offset: 3 }]);
      const records = await readTopic(log, TOPIC);
      expect(records.map((r) => (JSON.parse(r.value) as EventEnvelope).data)).toEqual(['a', 'b', 'c', 'd']);
    });

    it('publishes at most RELAY_BATCH_EVENTS events at once, a larger commit whole and alone', async () => {
      const { db } = await setUp();
      const down: EventLog = { ...log, append: async () => Promise.reject(new Error('log unreachable')), close: async () => {} };
      const first = await createMongoEventStore({ db, topic: TOPIC, log: down, publishTimeoutMs: 100 });
      // Stored while the log is down: 600, 600, then 1,200 events, in three commits.
      for (const [i, n] of [600, 600, 1200].entries()) {
        await first.appendToStream(`castie-big-${i}`, Array.from({ length: n }, (_, j) => event(`castie-big-${i}`, j)), { expectedVersion: 'no_stream' });
      }
      await first.close();
      const appends: number[] = [];
      const counted: EventLog = { ...log, append: async (topic, records) => (appends.push(records.length), log.append(topic, records)), close: async () => {} };
      const second = await createMongoEventStore({ db, topic: TOPIC, log: counted });
      cleanups.push(() => second.close());
      await second.appendToStream('castie-big-3', [event('castie-big-3', 'last')], { expectedVersion: 'no_stream' });
      expect(RELAY_BATCH_EVENTS).toBe(1000);
      expect(appends).toEqual([600, 600, 1200, 1]);
    });

    it('publishes appends of a second process through the one relay that holds the lease, each once', async () => {
      const { db } = await setUp();
      const holder = await createMongoEventStore({ db, topic: TOPIC, log });
      cleanups.push(() => holder.close());
      await holder.appendToStream('castie-3', [event('castie-3', 0)], { expectedVersion: 'no_stream' });
      // The second store shares the database but has no working log: only the lease holder can publish.
      const other = await createMongoEventStore({ db, topic: TOPIC, log: { ...log, append: async () => Promise.reject(new Error('must not publish')), close: async () => {} } });
      cleanups.push(() => other.close());
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) => other.appendToStream(`castie-${10 + i}`, [event(`castie-${10 + i}`, i)], { expectedVersion: 'no_stream' })),
      );
      for (const result of results) expect(result.positions).toHaveLength(1);
      const records = await readTopic(log, TOPIC);
      expect(records).toHaveLength(6);
      expect(new Set(records.map((r) => r.key)).size).toBe(6);
    });
  });
});

const bothReason = [mongo.url ? null : mongo.reason, kafka.brokers ? null : kafka.reason].filter(Boolean).join('; ');

describe.skipIf(!mongo.url || !kafka.brokers)(`mongo event store relayed to kafka${bothReason ? ` (skipped: ${bothReason})` : ''}`, () => {
  let client: MongoClient;
  beforeAll(() => {
    client = connectMongo(mongo.url!);
  });
  afterAll(() => client.close());

  describeEventStore('mongodb, relayed to kafka', async () => {
    const log = createKafkaEventLog({ brokers: kafka.brokers!, clientId: `castie-test-${randomUUID().slice(0, 8)}` });
    const db = client.db(uniqueDatabase());
    const topic = `casties-${randomUUID().slice(0, 8)}`;
    const opened: EventStore[] = [];
    const open = async (): Promise<EventStore> => {
      const store = await createMongoEventStore({ db, topic, log });
      opened.push(store);
      return store;
    };
    return {
      store: await open(),
      reopen: open,
      cleanup: async () => {
        for (const store of opened) await store.close();
        await log.close();
        await db.dropDatabase();
      },
    };
  });
});
