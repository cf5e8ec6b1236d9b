import { defineEventCatalog, DomainError } from '@castie/contracts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFileEventLog, type FileEventLog } from '../embedded/file-event-log.ts';
import { createLogEventStore } from '../embedded/log-event-store.ts';
import type { EventStore } from '../ports/event-store.ts';
import { CommandHandler, type Decider } from './decider.ts';

// A jar of at most ten marbles: each command adds one, refused once it is full.
const catalog = defineEventCatalog('jars', { MarbleAdded: z.object({ colour: z.string() }) });
type Added = { type: 'MarbleAdded'; data: { colour: string } };
type Jar = { marbles: string[] };
const jar: Decider<{ colour: string }, Added, Jar> = {
  initialState: () => ({ marbles: [] }),
  evolve: (state, event) => ({ marbles: [...state.marbles, event.data.colour] }),
  decide(command, state) {
    if (state.marbles.length >= 10) throw new DomainError('cannot_forecast', 'the jar is full');
    return [{ type: 'MarbleAdded', data: { colour: command.colour } }];
  },
};
const meta = { actor: 'test', now: new Date('2026-01-01T00:00:00Z') };

let dir: string;
let log: FileEventLog;
let store: EventStore;
/** How many events the store handed out per read, in order. */
let readSizes: number[];
let counting: EventStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'castie-handler-'));
  log = await createFileEventLog({ dir });
  store = await createLogEventStore({ log, topic: 'jars' });
  readSizes = [];
  counting = {
    ...store,
    readStream: async (...args) => {
      const read = await store.readStream(...args);
      readSizes.push(read.events.length);
      return read;
    },
  };
});
afterEach(async () => {
  await store.close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

describe('command handler', () => {
  it('reads only what its stream gained since it last folded it, and sees what another handler appended', async () => {
    const mine = new CommandHandler(counting, catalog, jar);
    const theirs = new CommandHandler(store, catalog, jar);
    for (const colour of ['red', 'blue', 'green']) await theirs.handle('jar-1', { colour }, meta);
    expect(await mine.load('jar-1')).toEqual({ version: 3, state: { marbles: ['red', 'blue', 'green'] } });
    expect(await mine.load('jar-1')).toEqual({ version: 3, state: { marbles: ['red', 'blue', 'green'] } });
    await theirs.handle('jar-1', { colour: 'gold' }, meta);
    expect(await mine.load('jar-1')).toEqual({ version: 4, state: { marbles: ['red', 'blue', 'green', 'gold'] } });
    // The whole stream once, then nothing new, then the one event it gained.
    expect(readSizes).toEqual([3, 0, 1]);
    // Its own command folds on from what it kept, and the state it answers is the stream's.
    const added = await mine.handle('jar-1', { colour: 'white' }, meta);
    expect(added.state.marbles).toEqual(['red', 'blue', 'green', 'gold', 'white']);
    expect(await mine.load('jar-1')).toEqual({ version: 5, state: added.state });
    expect((await new CommandHandler(store, catalog, jar).load('jar-1')).state).toEqual(added.state);
  });

  it('gives events ids in the order they were appended (time first, in the spec\'s 32-hex shape), across streams', async () => {
    const handler = new CommandHandler(store, catalog, jar);
    for (let i = 0; i < 200; i++) await handler.handle(`jar-${i % 50}`, { colour: 'red' }, meta);
    const ids = (await log.read('jars', 0, 1000)).map((record) => (JSON.parse(record.value) as { id: string }).id);
    expect(ids).toHaveLength(200);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(200);
  });

  it('decides every one of many concurrent commands on the current state: the jar never holds more than ten', async () => {
    const handlers = [new CommandHandler(store, catalog, jar), new CommandHandler(store, catalog, jar)];
    // Both keep the jar with one marble, then race: each attempt after a conflict folds on from it.
    await handlers[0]!.handle('jar-2', { colour: 'first' }, meta);
    for (const handler of handlers) expect((await handler.load('jar-2')).version).toBe(1);
    const results = await Promise.allSettled(Array.from({ length: 25 }, (_, i) => handlers[i % 2]!.handle('jar-2', { colour: `c${i}` }, meta)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(9);
    expect(results.filter((r) => r.status === 'rejected').every((r) => r.reason instanceof DomainError)).toBe(true);
    for (const handler of handlers) expect((await handler.load('jar-2')).state.marbles).toHaveLength(10);
    expect((await store.readStream('jar-2')).version).toBe(10);
  });

  it('folds only what follows its kept state, even from a store that answers the whole stream', async () => {
    const whole: EventStore = { ...store, readStream: (id) => store.readStream(id) };
    const handler = new CommandHandler(whole, catalog, jar);
    for (const colour of ['red', 'blue']) await handler.handle('jar-4', { colour }, meta);
    expect((await handler.load('jar-4')).state.marbles).toEqual(['red', 'blue']);
    await handler.handle('jar-4', { colour: 'green' }, meta);
    expect((await handler.load('jar-4')).state.marbles).toEqual(['red', 'blue', 'green']);
  });

  it('starts over from what the store holds when its kept state is no longer the stream\'s (a store emptied while it ran)', async () => {
    const emptied = await createLogEventStore({ log, topic: 'jars-emptied' });
    let inner: EventStore = store;
    const switching: EventStore = { ...store, readStream: (...args) => inner.readStream(...args), appendToStream: (...args) => inner.appendToStream(...args) };
    const handler = new CommandHandler(switching, catalog, jar);
    for (const colour of ['red', 'blue', 'green']) await handler.handle('jar-5', { colour }, meta);
    expect((await handler.load('jar-5')).version).toBe(3);
    inner = emptied;
    const added = await handler.handle('jar-5', { colour: 'white' }, meta);
    expect([added.version, added.state.marbles]).toEqual([1, ['white']]);
    expect((await handler.load('jar-5')).state.marbles).toEqual(['white']);
    await emptied.close();
  });

  it('hands out states nobody can change in place, so a careless caller cannot corrupt the next command', async () => {
    const handler = new CommandHandler(store, catalog, jar);
    await handler.handle('jar-3', { colour: 'red' }, meta);
    const { state } = await handler.load('jar-3');
    expect(() => state.marbles.push('stolen')).toThrow(TypeError);
    expect(() => ((state as { marbles: string[] }).marbles = [])).toThrow(TypeError);
    const added = await handler.handle('jar-3', { colour: 'blue' }, meta);
    expect(added.state.marbles).toEqual(['red', 'blue']);
    expect(() => added.state.marbles.pop()).toThrow(TypeError);
  });
});
