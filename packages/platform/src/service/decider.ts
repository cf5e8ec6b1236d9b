import type { DomainEvent, EventCatalog, EventEnvelope } from '@castie/contracts';
import { LRUCache } from 'lru-cache';
import { randomUUID } from 'node:crypto';
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

/** Streams whose folded state a handler keeps (each a small object: a Castie, an account, a follow). */
const FOLDED_STREAMS = 10_000;

/**
 * Loads, decides and appends one aggregate's command with optimistic concurrency; on a conflict it
 * reloads and decides again, so concurrent commands on one stream serialize without a lock and
 * invariants are never checked on stale state.
 *
 * It keeps the state it folded for the streams it handled lately, with the version folded up to:
 * events never change, so that state stays the stream's state at that version, and the next load
 * reads and folds only the events after it (none, mostly: a Castie is read at every forecast, an
 * account at every read of its preferences). Kept states are deeply frozen, as every caller shares
 * them: code that changed one in place would change the stream's state for the next command.
 */
export class CommandHandler<C, E extends DomainEvent, S> {
  readonly #folded = new LRUCache<string, { state: S; version: number }>({ max: FOLDED_STREAMS });

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
    const { version, events } = await this.store.readStream(streamId, known ? { afterVersion: known.version } : {});
    if (known && events.length === 0) return { state: known.state, version: known.version };
    let state = known?.state ?? this.decider.initialState();
    for (const envelope of events) state = this.decider.evolve(state, this.catalog.parse(envelope) as E);
    return { state: this.#keep(streamId, state, version), version };
  }

  /** Keeps a stream's state at a version (unless a later one is kept already) and returns it frozen. */
  #keep(streamId: string, state: S, version: number): S {
    deepFreeze(state);
    if (version > 0 && (this.#folded.get(streamId)?.version ?? -1) < version) this.#folded.set(streamId, { state, version });
    return state;
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
        const next = events.reduce((s, e) => this.decider.evolve(s, e), state);
        return { state: next, events, version: appended.version, positions: appended.positions };
      } catch (error) {
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
    id: newId(),
    type: event.type,
    schemaVersion,
    streamId,
    occurredAt: meta.now.toISOString(),
    actor: meta.actor,
    data: event.data,
  };
}

/** Freezes an object and everything it holds (plain data: objects, arrays, Dates). */
function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const member of Object.values(value)) deepFreeze(member);
}
