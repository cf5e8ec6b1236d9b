// Throughput of the embedded event log and the event store on it: appends one at a time (one sync
// each) against concurrent appends sharing group commits, and replay speed at start-up.
// Run: node scripts/castie.mjs bench event-log [records=200000]
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileEventLog } from '../packages/platform/src/embedded/file-event-log.ts';
import { createLogEventStore } from '../packages/platform/src/embedded/log-event-store.ts';
import type { EventLog } from '../packages/platform/src/ports/event-log.ts';

const records = Number(process.argv[2] ?? 200_000);
const sequentialAppends = Math.min(records, 2_000);
const concurrency = 200;

/** An envelope of typical size (~300 bytes), as services append them. */
const envelope = (streamId: string, n: number): string =>
  JSON.stringify({
    id: randomUUID().replaceAll('-', ''),
    type: 'ForecastMade',
    schemaVersion: 1,
    streamId,
    streamVersion: n + 1,
    occurredAt: new Date().toISOString(),
    actor: `user-${n % 997}`,
    data: { castieId: streamId, probability: (n % 100) / 100, comment: 'Looks like rain over the weekend.' },
  });

async function measure(label: string, count: number, run: () => Promise<unknown>): Promise<void> {
  const started = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(`${label.padEnd(52)} ${String(count).padStart(8)} ${Math.round(count / seconds).toLocaleString('en').padStart(12)} /s`);
}

/** Runs `count` single-record appends from `concurrency` concurrent writers. */
async function appendConcurrently(log: EventLog, topic: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let n = next++; n < count; n = next++) await log.append(topic, [{ key: `castie-${n % 1000}`, value: envelope(`castie-${n % 1000}`, n) }]);
    }),
  );
}

async function replay(log: EventLog, topic: string, count: number): Promise<void> {
  const subscription = await log.subscribe({ group: `bench-${randomUUID()}`, topics: [topic], startAt: () => 'earliest', handle: async () => {} });
  if (!(await subscription.waitFor([{ topic, partition: 0, offset: count - 1 }], 600_000))) throw new Error('replay timed out');
  await subscription.stop();
}

const dir = await mkdtemp(join(tmpdir(), 'castie-bench-'));
try {
  console.log(`embedded event log in ${dir}, ${records} records of ~300 bytes\n`);
  console.log(`${'measure'.padEnd(52)} ${'records'.padStart(8)} ${'throughput'.padStart(12)}`);
  let log = await createFileEventLog({ dir });
  await measure('append, one at a time (one fdatasync each)', sequentialAppends, async () => {
    for (let n = 0; n < sequentialAppends; n++) await log.append('sequential', [{ key: `castie-${n % 1000}`, value: envelope('c', n) }]);
  });
  await measure(`append, ${concurrency} concurrent writers (group commit)`, records, () => appendConcurrently(log, 'concurrent', records));
  await measure('replay through a consumer group', records, () => replay(log, 'concurrent', records));
  await log.close();
  await measure('reopen: scan and checksum every record', records, async () => (log = await createFileEventLog({ dir })));

  const store = await createLogEventStore({ log, topic: 'store' });
  const streams = Array.from({ length: concurrency }, (_, i) => `forecast-${i}`);
  const perStream = Math.ceil(records / streams.length);
  await measure(`event store append, ${concurrency} streams concurrently`, perStream * streams.length, () =>
    Promise.all(
      streams.map(async (streamId) => {
        for (let version = 0; version < perStream; version++) {
          const event = JSON.parse(envelope(streamId, version)) as Parameters<typeof store.appendToStream>[1][number];
          await store.appendToStream(streamId, [event], { expectedVersion: version });
        }
      }),
    ),
  );
  await measure('event store start-up: replay and index streams', perStream * streams.length, () => createLogEventStore({ log, topic: 'store' }));
  await log.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
