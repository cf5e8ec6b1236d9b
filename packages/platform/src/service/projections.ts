import { EventEnvelopeSchema, InvalidEventError, type DomainEvent, type EventCatalog, type EventEnvelope } from '@castie/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { DocumentStore } from '../ports/document-store.ts';
import type { EventLog, LogPosition, LogRecord, Subscription } from '../ports/event-log.ts';

/** One read model: which topics feed it and how an event changes it. */
export interface Projection {
  name: string;
  topics: readonly string[];
  /** Creates indexes; called before the first event. */
  setup?(store: DocumentStore): Promise<void>;
  /**
   * Applies one event. Must be idempotent: the runner skips what its checkpoint says is done, but
   * after a crash the tail of a batch can come again.
   */
  apply(event: DomainEvent, envelope: EventEnvelope, record: LogRecord): Promise<void>;
}

export interface ProjectionRunnerOptions {
  /** Consumer group, e.g. `groups-read`; also names the checkpoints and the dead-letter topic. */
  group: string;
  log: EventLog;
  store: DocumentStore;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  catalogs: readonly EventCatalog<any>[];
  projections: readonly Projection[];
  logger?: FastifyBaseLogger;
  /** Attempts before an event that keeps failing goes to the dead-letter topic. */
  attempts?: number;
}

export interface ProjectionRunner {
  waitFor(positions: readonly LogPosition[], timeoutMs: number): Promise<boolean>;
  /** Resolves once every record that existed at start has been applied. */
  caughtUp(): Promise<void>;
  stop(): Promise<void>;
}

interface Checkpoint {
  _id: string;
  offset: number;
  [key: string]: unknown;
}

/**
 * Feeds a service's read models from the log (rules 5 and 7). The checkpoint of each partition
 * lives in the same document store as the read models, so a store that was lost or dropped
 * rebuilds itself from the start of the log, and a kept one resumes where it stopped. Records at
 * or below the checkpoint are skipped (redelivery changes nothing); an event that breaks its
 * contract or keeps failing goes to `<group>.dead-letter` with the reason, and the runner goes on.
 */
export async function startProjections(options: ProjectionRunnerOptions): Promise<ProjectionRunner> {
  const { group, log, store, catalogs, projections, logger } = options;
  const attempts = options.attempts ?? 3;
  const checkpoints = store.collection<Checkpoint>('_checkpoints');
  const catalogByTopic = new Map(catalogs.map((c) => [c.topic, c]));
  const topics = [...new Set(projections.flatMap((p) => p.topics))];
  for (const p of projections) await p.setup?.(store);

  const done = new Map<string, number>();
  const checkpointId = (topic: string, partition: number) => `${group}:${topic}:${partition}`;

  async function deadLetter(record: LogRecord, reason: string): Promise<void> {
    logger?.error({ group, topic: record.topic, offset: record.offset, reason }, 'event sent to the dead-letter topic');
    await log.append(`${group}.dead-letter`, [{ key: record.key, value: JSON.stringify({ reason, topic: record.topic, partition: record.partition, offset: record.offset, value: record.value }) }]);
  }

  async function applyRecord(record: LogRecord): Promise<void> {
    let envelope: EventEnvelope;
    let event: DomainEvent;
    try {
      envelope = EventEnvelopeSchema.parse(JSON.parse(record.value));
      const catalog = catalogByTopic.get(record.topic);
      if (!catalog) throw new InvalidEventError('?', `no catalog for topic ${record.topic}`);
      event = catalog.parse(envelope);
    } catch (error) {
      return deadLetter(record, `contract: ${(error as Error).message}`);
    }
    for (const projection of projections) {
      if (!projection.topics.includes(record.topic)) continue;
      for (let attempt = 1; ; attempt++) {
        try {
          await projection.apply(event, envelope, record);
          break;
        } catch (error) {
          if (attempt >= attempts) {
            await deadLetter(record, `${projection.name}: ${(error as Error).message}`);
            break;
          }
        }
      }
    }
  }

  const subscription: Subscription = await log.subscribe({
    group,
    topics,
    startAt: async (topic, partition) => {
      const saved = await checkpoints.findOne({ _id: checkpointId(topic, partition) });
      if (saved) done.set(`${topic}:${partition}`, saved.offset);
      return saved ? { offset: saved.offset + 1 } : 'earliest';
    },
    handle: async (records) => {
      const first = records[0];
      if (!first) return;
      const key = `${first.topic}:${first.partition}`;
      const upTo = done.get(key) ?? -1;
      let last = upTo;
      for (const record of records) {
        if (record.offset <= upTo) continue;
        await applyRecord(record);
        last = record.offset;
      }
      if (last > upTo) {
        await checkpoints.replaceOne({ _id: checkpointId(first.topic, first.partition) }, { _id: checkpointId(first.topic, first.partition), offset: last }, { upsert: true });
        done.set(key, last);
      }
    },
  });

  const startEnds: LogPosition[] = [];
  for (const topic of topics) {
    for (const [partition, end] of await log.endOffsets(topic)) if (end > 0) startEnds.push({ topic, partition, offset: end - 1 });
  }

  return {
    waitFor: (positions, timeoutMs) => subscription.waitFor(positions, timeoutMs),
    caughtUp: async () => {
      while (!(await subscription.waitFor(startEnds, 60_000))) logger?.warn({ group }, 'still replaying the log');
    },
    stop: () => subscription.stop(),
  };
}
