import { socialEvents } from '@castie/contracts';
import { CommandHandler, ConcurrencyError, createFileEventLog, createLogEventStore, type EventStore, type FileEventLog } from '@castie/platform';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { friendshipDecider, frodadsStreamId } from './decider.ts';

// Given both users act on their pair's stream at the same moment, when the commands race, then
// optimistic concurrency makes the loser decide again on the winner's events: the stream never
// holds two requests, and never a removal of a friendship that was not there.

let dir: string;
let log: FileEventLog;
let store: EventStore;
let conflicts: number;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'castie-frodads-'));
  log = await createFileEventLog({ dir });
  const inner = await createLogEventStore({ log, topic: 'social' });
  conflicts = 0;
  // Counts the conflicts, to show the race really happened.
  store = {
    topic: inner.topic,
    readStream: (id, options) => inner.readStream(id, options),
    appendToStream: async (id, events, options) => {
      try {
        return await inner.appendToStream(id, events, options);
      } catch (error) {
        if (error instanceof ConcurrencyError) conflicts++;
        throw error;
      }
    },
    close: () => inner.close(),
  };
});
afterEach(async () => {
  await store.close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

const ids = (n: number) => [`${n}`.padStart(2, '0').repeat(16), `${n + 50}`.padStart(2, '0').repeat(16)] as const;
const meta = { actor: 'test', now: new Date('2026-03-01T12:00:00Z') };

describe('the pair stream under concurrency', () => {
  it('requests sent at once from both sides end as one request and its acceptance', async () => {
    const handler = new CommandHandler(store, socialEvents, friendshipDecider);
    for (let n = 0; n < 20; n++) {
      const [a, b] = ids(n);
      const stream = frodadsStreamId(a, b);
      await Promise.all([handler.handle(stream, { type: 'RequestFrodad', fromId: a, toId: b }, meta), handler.handle(stream, { type: 'RequestFrodad', fromId: b, toId: a }, meta)]);
      const { events } = await store.readStream(stream);
      expect(events.map((e) => e.type)).toEqual(['FrodadRequested', 'FrodadRequestAccepted']);
      expect((await handler.load(stream)).state.status).toBe('friends');
    }
    expect(conflicts).toBeGreaterThan(0);
  });

  it('an unfrodad racing a second unfrodad from the other side removes the friendship once; the loser is refused', async () => {
    const handler = new CommandHandler(store, socialEvents, friendshipDecider);
    const [a, b] = ids(1);
    const stream = frodadsStreamId(a, b);
    await handler.handle(stream, { type: 'RequestFrodad', fromId: a, toId: b }, meta);
    await handler.handle(stream, { type: 'RespondToRequest', byId: b, fromId: a, fromHandle: 'a', accept: true }, meta);
    const results = await Promise.allSettled([
      handler.handle(stream, { type: 'RemoveFrodad', byId: a, otherId: b, otherHandle: 'b' }, meta),
      handler.handle(stream, { type: 'RemoveFrodad', byId: b, otherId: a, otherHandle: 'a' }, meta),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ errorType: 'improper_frodad_response' });
    const { events } = await store.readStream(stream);
    expect(events.filter((e) => e.type === 'FrodadRemoved')).toHaveLength(1);
  });
});
