import type { DomainEvent, EventCatalog, EventEnvelope } from '@castie/contracts';
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

/**
 * Loads, decides and appends one aggregate's command with optimistic concurrency; on a conflict it
 * reloads and decides again, so concurrent commands on one stream serialize without a lock and
 * invariants are never checked on stale state.
 */
export class CommandHandler<C, E extends DomainEvent, S> {
  constructor(
    private readonly store: EventStore,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    private readonly catalog: EventCatalog<any>,
    private readonly decider: Decider<C, E, S>,
    private readonly retries = 20,
  ) {}

  /** Current state and version of a stream. */
  async load(streamId: string): Promise<{ state: S; version: number }> {
    const { version, events } = await this.store.readStream(streamId);
    let state = this.decider.initialState();
    for (const envelope of events) state = this.decider.evolve(state, this.catalog.parse(envelope) as E);
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
