import type { EventEnvelope } from '@castie/contracts';
import type { LogPosition } from './event-log.ts';

/** Expected version of a stream before an append: a number (the last event's version), or 'no_stream'. */
export type ExpectedVersion = number | 'no_stream' | 'any';

export interface ReadStreamResult {
  /** Version of the last event (versions count from 1); 0 when the stream does not exist. */
  version: number;
  events: EventEnvelope[];
}

export interface ReadStreamOptions {
  /**
   * Only the events after this version (0: all of them). A reader that kept what it folded up to
   * some version reads just what came since; `version` is still the stream's own.
   */
  afterVersion?: number;
}

export interface AppendResult {
  /** Version of the last appended event. */
  version: number;
  /** Where the appended events landed in the log; a reader can wait for these. */
  positions: LogPosition[];
}

/** Thrown when the stream's version differs from the expected one: reload, decide again, retry. */
export class ConcurrencyError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(`stream ${streamId}: expected version ${String(expected)}, found ${actual}`);
    this.name = 'ConcurrencyError';
  }
}

/**
 * The event store port: event streams with optimistic concurrency, published to one topic.
 * Events are already stamped envelopes (id, type, version of schema, stream id and version...);
 * `appendToStream` fills `streamVersion` and checks it against the expected version atomically.
 */
export interface EventStore {
  /** The topic every event of this store is published to (key = stream id). */
  readonly topic: string;
  /** The stream's version and its events (those after `afterVersion`, when given), in order. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<ReadStreamResult>;
  appendToStream(
    streamId: string,
    events: readonly Omit<EventEnvelope, 'streamVersion'>[],
    options: { expectedVersion: ExpectedVersion },
  ): Promise<AppendResult>;
  close(): Promise<void>;
}
