import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { describeEventLog } from '../testing/conformance/event-log.ts';
import { testKafka } from '../testing/servers/kafka.ts';
import type { EventLog } from '../ports/event-log.ts';
import { createKafkaEventLog } from './kafka-event-log.ts';

const kafka = await testKafka();
const brokers = kafka.brokers ?? [];
const openLog = (options: { partitions?: number } = {}): EventLog => createKafkaEventLog({ brokers, clientId: `castie-test-${randomUUID().slice(0, 8)}`, ...options });

describe.skipIf(!kafka.brokers)(`kafka event log${kafka.brokers ? ` (${kafka.reason})` : ` (skipped: ${kafka.reason})`}`, () => {
  afterAll(() => kafka.stop());

  describeEventLog('kafka', async () => {
    const opened: EventLog[] = [];
    const open = async (): Promise<EventLog> => {
      const log = openLog();
      opened.push(log);
      return log;
    };
    return {
      log: await open(),
      reopen: open,
      cleanup: async () => {
        for (const log of opened) await log.close();
      },
    };
  });

  describe('partitions', () => {
    const logs: EventLog[] = [];
    afterEach(async () => {
      for (const log of logs.splice(0)) await log.close();
    });

    it('creates a topic with the configured partitions and keeps each key in one of them', async () => {
      const log = openLog({ partitions: 4 });
      logs.push(log);
      const topic = `t-${randomUUID().slice(0, 8)}`;
      const positions = await log.append(
        topic,
        Array.from({ length: 40 }, (_, i) => ({ key: `stream-${i % 10}`, value: String(i) })),
      );
      expect([...(await log.endOffsets(topic)).keys()].sort()).toEqual([0, 1, 2, 3]);
      const partitionOfKey = new Map<string, number>();
      positions.forEach((p, i) => {
        const key = `stream-${i % 10}`;
        expect(p.partition).toBe(partitionOfKey.get(key) ?? p.partition);
        partitionOfKey.set(key, p.partition);
      });
      expect(new Set(positions.map((p) => p.partition)).size).toBeGreaterThan(1);
      // A second append of the same key lands after the first in the same partition.
      const [again] = await log.append(topic, [{ key: 'stream-3', value: 'later' }]);
      expect(again!.partition).toBe(partitionOfKey.get('stream-3'));
      expect(again!.offset).toBeGreaterThan(Math.max(...positions.filter((p) => p.partition === again!.partition).map((p) => p.offset)));
    });
  });
});
