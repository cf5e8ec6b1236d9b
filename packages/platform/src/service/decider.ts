import type { DomainEvent, EventCatalog, EventEnvelope } from '@castie/contracts';
import { LRUCache } from 'lru-cache';
import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { deepFreeze } from '../deep-freeze.ts';
import type { LogPosition } from '../ports/event-log.ts';
import { ConcurrencyError, type EventStore } from '../ports/event-store.ts';

/**
 * A pure aggregate: commands are decided against state into events; events evolve state.
 * No I/O, no clock, no random ids inside: they arrive in the command.
 */
export interface Decider<C, E extends DomainEvent, S> {
  initialState(): S;
  evolve(state: S, event: E): S;
  /** Throws DomainError when the command is refused. */
  decide(command: C, state: S): E[];
}

export interface CommandMeta {
  /** Who causes it: a user id, `admin` or `system`. */
  actor: string;
  now: Date;
}

export interface Handled<S, E> {
  state: S;
  events: E[];
  /** Stream version after the command (unchanged when it produced no events). */
  version: number;
  positions: LogPosition[];
}

/** A 32-character hex id, the shape the spec uses for uuids. */
export const newId = (): string => randomUUID().replaceAll('-', '');

/**
 * An event's id: a UUIDv7 (milliseconds first, then random) in the same 32-character shape.
 * Read models that key a document by its event's id (notifications' activity) then insert at the
 * end of their `_id` index instead of on a random page of it: under load each random insert is
 * one more page every commit writes. Users, Casties and comments keep random ids (newId), which
 * say nothing of when they were made.
 */
export const newEventId = (): string => uuidv7().replaceAll('-', '');

/** What a handler's kept states may take on the heap, about (a Castie's state takes 1-2 KB). */
const FOLDED_BYTES = 8 * 1024 * 1024;

/**
 * Loads, decides and appends one aggregate's command with optimistic concurrency; on a conflict it
 * reloads and decides again, so concurrent commands on one stream serialize without a lock and
 * invariants are never checked on stale state.
 *
 * It keeps the state it folded for the streams it handled lately, with the version folded up to:
 * events never change, so that state stays the stream's state at that version, and the next load
 * reads and folds only the events after it (none, mostly: a Castie is read at every forecast, an
 * account at every read of its preferences). The states it hands out are deeply frozen, as every
 * caller shares the kept ones: code that changed one in place would change the stream's state for
 * the next command. Bounded by an estimate of their heap (FOLDED_BYTES per handler).
 */
export class CommandHandler<C, E extends DomainEvent, S> {
  readonly #folded = new LRUCache<string, { state: S; version: number }>({ maxSize: FOLDED_BYTES });

  constructor(
    private readonly store: EventStore,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    private readonly catalog: EventCatalog<any>,
    private readonly decider: Decider<C, E, S>,
    private readonly retries = 20,
  ) {}

  /** Current state and version of a stream (frozen: see the class comment). */
  async load(streamId: string): Promise<{ state: S; version: number }> {
    const known = this.#folded.get(streamId);
    const after = known?.version ?? 0;
    const { version, events } = await this.store.readStream(streamId, known ? { afterVersion: after } : {});
    if (known && events.length === 0) return { state: known.state, version: known.version };
    let state = known?.state ?? this.decider.initialState();
    // Only what follows the kept state, whatever the store answered.
    for (const envelope of events) if (envelope.streamVersion > after) state = this.decider.evolve(state, this.catalog.parse(envelope) as E);
    deepFreeze(state);
    if (version > 0 && (this.#folded.get(streamId)?.version ?? -1) < version) this.#folded.set(streamId, { state, version }, { size: heapBytes(state) });
    return { state, version };
  }

  async handle(streamId: string, command: C, meta: CommandMeta): Promise<Handled<S, E>> {
    for (let attempt = 0; ; attempt++) {
      const { state, version } = await this.load(streamId);
      const events = this.decider.decide(command, state);
      if (events.length === 0) return { state, events, version, positions: [] };
      const envelopes = events.map((e) => envelopeOf(streamId, this.catalog.check(e), this.catalog.versionOf(e.type), meta));
      try {
        const appended = await this.store.appendToStream(streamId, envelopes, { expectedVersion: version === 0 ? 'no_stream' : version });
        // Not kept: many streams are written once and never read again (a forecast); the next
        // load of one that is folds the new events onto the state it kept before.
        const next = deepFreeze(events.reduce((s, e) => this.decider.evolve(s, e), state));
        return { state: next, events, version: appended.version, positions: appended.positions };
      } catch (error) {
        // The next attempt reads the whole stream: a kept state that is no longer the stream's
        // (its store was emptied while this process ran) cannot refuse every command forever.
        if (error instanceof ConcurrencyError) this.#folded.delete(streamId);
        if (error instanceof ConcurrencyError && attempt < this.retries) continue;
        throw error;
      }
    }
  }
}

/**
 * Records facts that are never refused and do not depend on their stream's past (a person opened
 * their notifications, signed in): appended without reading the stream first, so what one costs
 * does not grow with the stream. A CommandHandler would read and fold every earlier fact of the
 * stream to decide the next one; a person's inbox stream gains one at every visit.
 */
export class FactRecorder<C, E extends DomainEvent> {
  constructor(
    private readonly store: EventStore,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    private readonly catalog: EventCatalog<any>,
    private readonly facts: (command: C) => E[],
  ) {}

  async record(streamId: string, command: C, meta: CommandMeta): Promise<{ events: E[]; positions: LogPosition[] }> {
    const events = this.facts(command);
    if (events.length === 0) return { events, positions: [] };
    const envelopes = events.map((e) => envelopeOf(streamId, this.catalog.check(e), this.catalog.versionOf(e.type), meta));
    const appended = await this.store.appendToStream(streamId, envelopes, { expectedVersion: 'any' });
    return { events, positions: appended.positions };
  }
}

function envelopeOf(streamId: string, event: DomainEvent, schemaVersion: number, meta: CommandMeta): Omit<EventEnvelope, 'streamVersion'> {
  return {
    id: newEventId(),
    type: event.type,
    schemaVersion,
    streamId,
    occurredAt: meta.now.toISOString(),
    actor: meta.actor,
    data: event.data,
  };
}

/** About what plain data takes on the heap: two bytes a character, 16 a value, 32 an object or array. */
function heapBytes(value: unknown): number {
  if (typeof value === 'string') return 16 + 2 * value.length;
  if (value === null || typeof value !== 'object') return 16;
  let bytes = 32;
  for (const key in value) bytes += 2 * key.length + heapBytes((value as Record<string, unknown>)[key]);
  return bytes;
}
