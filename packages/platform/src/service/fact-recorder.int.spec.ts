import { defineEventCatalog } from '@castie/contracts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFileEventLog, type FileEventLog } from '../embedded/file-event-log.ts';
import { createLogEventStore } from '../embedded/log-event-store.ts';
import type { EventStore } from '../ports/event-store.ts';
import { FactRecorder } from './decider.ts';

const catalog = defineEventCatalog('visits', { Visited: z.object({ userId: z.string(), at: z.string() }) });
type Visit = { type: 'Visited'; data: { userId: string; at: string } };
const visit = (command: { userId: string; now: Date }): Visit[] => [{ type: 'Visited', data: { userId: command.userId, at: command.now.toISOString() } }];

let dir: string;
let log: FileEventLog;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'castie-facts-'));
  log = await createFileEventLog({ dir });
});
afterEach(async () => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

describe('fact recorder', () => {
  it('appends each fact after those before it without reading the stream, whose events stay in order', async () => {
    const store = await createLogEventStore({ log, topic: 'visits' });
    let reads = 0;
    const counting: EventStore = { ...store, readStream: (...args) => (reads++, store.readStream(...args)) };
    const recorder = new FactRecorder(counting, catalog, visit);
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, i));
    for (let i = 0; i < 300; i++) await recorder.record('visits-ann', { userId: 'ann', now: at(i) }, { actor: 'ann', now: at(i) });
    // Two people at once: appends to one stream still go one after another.
    const together = await Promise.all([0, 1, 2].map((i) => recorder.record('visits-bob', { userId: 'bob', now: at(i) }, { actor: 'bob', now: at(i) })));
    expect(reads).toBe(0);
    expect(together.every((r) => r.positions.length === 1 && r.events.length === 1)).toBe(true);
    const ann = await store.readStream('visits-ann');
    expect(ann.version).toBe(300);
    expect(ann.events.map((e) => e.streamVersion)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(ann.events.at(-1)).toMatchObject({ type: 'Visited', actor: 'ann', data: { userId: 'ann', at: at(299).toISOString() } });
    expect((await store.readStream('visits-bob')).version).toBe(3);
    await store.close();
  });

  it('refuses a fact its catalog does not accept, and appends nothing', async () => {
    const store = await createLogEventStore({ log, topic: 'visits' });
    const recorder = new FactRecorder(store, catalog, (command: { userId: number }) => [{ type: 'Visited', data: { userId: command.userId as unknown as string, at: 'now' } }]);
    await expect(recorder.record('visits-x', { userId: 42 }, { actor: 'x', now: new Date() })).rejects.toThrow();
    expect((await store.readStream('visits-x')).version).toBe(0);
    await store.close();
  });
});
