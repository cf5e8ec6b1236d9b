import { defineEventCatalog } from '@castie/contracts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFileEventLog } from '../embedded/file-event-log.ts';
import { createMemoryDocumentStore } from '../embedded/memory-document-store.ts';
import type { DocumentStore } from '../ports/document-store.ts';
import type { EventLog, LogRecord } from '../ports/event-log.ts';
import { newId } from './decider.ts';
import { startProjections, type Projection } from './projections.ts';

const catalog = defineEventCatalog('tallies', { Counted: z.object({ n: z.number().int() }) });
const envelope = (data: unknown, type = 'Counted') => JSON.stringify({ id: newId(), type, schemaVersion: 1, streamId: 'tally-1', streamVersion: 1, occurredAt: new Date().toISOString(), actor: 'test', data });

let dir: string;
let log: EventLog;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'castie-projections-'));
  log = await createFileEventLog({ dir });
});
afterEach(async () => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

/** Sums `n` into one document; fails on demand for one value. */
function tally(store: DocumentStore, failOn: number | null = null): Projection {
  return {
    name: 'tally',
    topics: ['tallies'],
    apply: async (event) => {
      const { n } = event.data as { n: number };
      if (n === failOn) throw new Error(`cannot count ${n}`);
      await store.collection('sums').updateOne({ _id: 'sum' }, { $inc: { total: n } }, { upsert: true });
    },
  };
}

async function deadLetters(group: string): Promise<{ reason: string; offset: number }[]> {
  const seen: { reason: string; offset: number }[] = [];
  const sub = await log.subscribe({ group: `${group}-inspector`, topics: [`${group}.dead-letter`], startAt: () => 'earliest', handle: async (rs: LogRecord[]) => void seen.push(...rs.map((r) => JSON.parse(r.value))) });
  const ends = await log.endOffsets(`${group}.dead-letter`);
  const last = (ends.get(0) ?? 0) - 1;
  if (last >= 0) await sub.waitFor([{ topic: `${group}.dead-letter`, partition: 0, offset: last }], 3000);
  await sub.stop();
  return seen;
}

describe('projection runner', () => {
  it('sends an event that breaks its contract to the dead-letter topic and goes on', async () => {
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 1 }) }, { key: 'tally-1', value: envelope({ n: 'two' }) }, { key: 'tally-1', value: 'not json' }, { key: 'tally-1', value: envelope({ n: 3 }) }]);
    const store = createMemoryDocumentStore();
    const runner = await startProjections({ group: 'tally-read', log, store, catalogs: [catalog], projections: [tally(store)] });
    await runner.caughtUp();
    expect(await store.collection('sums').findOne({ _id: 'sum' })).toMatchObject({ total: 4 });
    const dead = await deadLetters('tally-read');
    expect(dead.map((d) => d.offset)).toEqual([1, 2]);
    expect(dead[0]!.reason).toMatch(/^contract: /);
    await runner.stop();
  });

  it('retries a failing event, then dead-letters it and goes on', async () => {
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 1 }) }, { key: 'tally-1', value: envelope({ n: 13 }) }, { key: 'tally-1', value: envelope({ n: 2 }) }]);
    const store = createMemoryDocumentStore();
    const runner = await startProjections({ group: 'tally-fail', log, store, catalogs: [catalog], projections: [tally(store, 13)] });
    await runner.caughtUp();
    expect(await store.collection('sums').findOne({ _id: 'sum' })).toMatchObject({ total: 3 });
    const dead = await deadLetters('tally-fail');
    expect(dead).toHaveLength(1);
    expect(dead[0]!.reason).toBe('tally: cannot count 13');
    await runner.stop();
  });

  it('rebuilds a lost store from the start, and resumes a kept one from its checkpoint', async () => {
    await log.append('tallies', [1, 2, 3].map((n) => ({ key: 'tally-1', value: envelope({ n }) })));
    const kept = createMemoryDocumentStore();
    const first = await startProjections({ group: 'tally-rebuild', log, store: kept, catalogs: [catalog], projections: [tally(kept)] });
    await first.caughtUp();
    await first.stop();
    await log.append('tallies', [{ key: 'tally-1', value: envelope({ n: 10 }) }]);

    // Same store: only the new event is applied (no double counting).
    const resumed = await startProjections({ group: 'tally-rebuild', log, store: kept, catalogs: [catalog], projections: [tally(kept)] });
    await resumed.caughtUp();
    expect(await kept.collection('sums').findOne({ _id: 'sum' })).toMatchObject({ total: 16 });
    await resumed.stop();

    // A new, empty store: everything is replayed.
    const fresh = createMemoryDocumentStore();
    const rebuilt = await startProjections({ group: 'tally-rebuild', log, store: fresh, catalogs: [catalog], projections: [tally(fresh)] });
    await rebuilt.caughtUp();
    expect(await fresh.collection('sums').findOne({ _id: 'sum' })).toMatchObject({ total: 16 });
    await rebuilt.stop();
  });
});
