import { EventEnvelopeSchema, type EventEnvelope } from '@castie/contracts';
import type { EventLog, LogPosition, LogRecord } from '../ports/event-log.ts';
import { ConcurrencyError, type EventStore, type ExpectedVersion } from '../ports/event-store.ts';

export interface LogEventStoreOptions {
  log: EventLog;
  /** The topic holding this store's events, key = stream id. The store must be its only writer. */
  topic: string;
}

/** Generous: replay reads the whole topic, but it must not hang start-up forever. */
const REPLAY_TIMEOUT_MS = 10 * 60_000;

const satisfies = (expected: ExpectedVersion, current: number): boolean =>
  expected === 'any' || (expected === 'no_stream' ? current === 0 : expected === current);

/**
 * Opens the event store of the embedded profile on an event log topic. At start it replays the topic
 * into memory (stream id -> events); afterwards it keeps that index in step with its own appends,
 * so reads never touch the log.
 *
 * Expected versions are checked within this process: appends to one stream run one after another
 * (check and reservation happen synchronously once the previous append settled), while appends to
 * different streams go to the log concurrently and share its group commit.
 */
export async function createLogEventStore({ log, topic }: LogEventStoreOptions): Promise<EventStore> {
  const streams = await replay(log, topic);
  /** Per stream: settles when its append in flight has finished (appended or failed). */
  const inFlight = new Map<string, Promise<void>>();
  let closed = false;

  return {
    topic,

    async readStream(streamId) {
      const events = streams.get(streamId) ?? [];
      return { version: events.length, events: [...events] };
    },

    async appendToStream(streamId, events, { expectedVersion }) {
      if (closed) throw new Error(`event store on ${topic} is closed`);
      // Validate before reserving, so a bad event never holds up the stream.
      const checked = events.map((event) => {
        const envelope = EventEnvelopeSchema.parse({ ...event, streamVersion: 1 });
        if (envelope.streamId !== streamId) throw new Error(`event ${envelope.id} belongs to stream ${envelope.streamId}, not ${streamId}`);
        return envelope;
      });
      for (let busy = inFlight.get(streamId); busy; busy = inFlight.get(streamId)) await busy;

      // From here to the append call nothing awaits: the check and the reservation are atomic.
      const stream = streams.get(streamId) ?? [];
      const current = stream.length;
      if (!satisfies(expectedVersion, current)) throw new ConcurrencyError(streamId, expectedVersion, current);
      if (checked.length === 0) return { version: current, positions: [] };
      const envelopes = checked.map((envelope, i) => ({ ...envelope, streamVersion: current + i + 1 }));
      let release!: () => void;
      inFlight.set(streamId, new Promise<void>((resolve) => (release = resolve)));
      try {
        const positions = await log.append(
          topic,
          envelopes.map((envelope) => ({ key: streamId, value: JSON.stringify(envelope) })),
        );
        stream.push(...envelopes);
        streams.set(streamId, stream);
        return { version: current + envelopes.length, positions };
      } finally {
        inFlight.delete(streamId);
        release();
      }
    },

    async close() {
      closed = true;
      await Promise.all(inFlight.values());
    },
  };
}

/**
 * Reads the whole topic through a private consumer group from the earliest offset and indexes it.
 * A record that is not a valid next event of its stream fails the start: the store would otherwise
 * hand out wrong versions.
 */
async function replay(log: EventLog, topic: string): Promise<Map<string, EventEnvelope[]>> {
  const streams = new Map<string, EventEnvelope[]>();
  const ends = await log.endOffsets(topic);
  const last: LogPosition[] = [...ends].filter(([, end]) => end > 0).map(([partition, end]) => ({ topic, partition, offset: end - 1 }));
  if (last.length === 0) return streams;

  let failure: unknown = null;
  const index = (record: LogRecord): void => {
    const envelope = EventEnvelopeSchema.parse(JSON.parse(record.value));
    const stream = streams.get(record.key) ?? [];
    if (envelope.streamId !== record.key || envelope.streamVersion !== stream.length + 1) {
      throw new Error(`event ${envelope.streamId}@${envelope.streamVersion} does not follow version ${stream.length} of stream ${record.key}`);
    }
    stream.push(envelope);
    streams.set(record.key, stream);
  };
  const subscription = await log.subscribe({
    group: `castie.event-store.${topic}`,
    topics: [topic],
    startAt: () => 'earliest',
    maxBatch: 5000,
    handle: async (records) => {
      for (const record of records) {
        if (failure) return;
        try {
          index(record);
        } catch (err) {
          // Not thrown: a redelivery would fail the same way. Remembered and raised once replay ends.
          failure = new Error(`${topic}@${record.partition}:${record.offset}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    },
  });
  try {
    if (!(await subscription.waitFor(last, REPLAY_TIMEOUT_MS))) throw new Error(`replaying ${topic} took longer than ${REPLAY_TIMEOUT_MS}ms`);
  } finally {
    await subscription.stop();
  }
  if (failure) throw failure;
  return streams;
}
