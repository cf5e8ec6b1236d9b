import { Kafka, Partitioners, logLevel, type Admin, type Consumer, type EachBatchPayload, type Message, type Producer } from 'kafkajs';
import {
  positionKey,
  type EventLog,
  type LogPosition,
  type LogRecord,
  type NewLogRecord,
  type StartAt,
  type SubscribeOptions,
  type Subscription,
} from '../ports/event-log.ts';
import { deliverUntilHandled, HandledPositions, Pauses } from '../log/handled-positions.ts';

export interface KafkaEventLogOptions {
  brokers: string[];
  clientId: string;
  /** Partitions of topics this log creates (default 3). Topics that exist keep theirs. */
  partitions?: number;
  /** Replication factor of topics this log creates; default: the brokers' `default.replication.factor`. */
  replicationFactor?: number;
  /** Told about kafkajs warnings and errors, and about failed batches being retried. */
  onWarning?: (message: string) => void;
}

/** Kafka's own rule for topic names. */
const isTopicName = (name: string): boolean => /^[A-Za-z0-9._-]{1,249}$/.test(name) && name !== '.' && name !== '..';
/** One produce request stays well below the brokers' default `message.max.bytes` (1 MB). */
const MAX_FLUSH_BYTES = 512 * 1024;
const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

interface PendingAppend {
  topic: string;
  records: readonly NewLogRecord[];
  partitions: number[];
  bytes: number;
  resolve: (positions: LogPosition[]) => void;
  reject: (err: unknown) => void;
}


/**
 * Opens the cluster's event log on Kafka (kafkajs). A topic is created on first use with
 * `partitions` partitions; a record's key picks its partition with Kafka's default (murmur2)
 * partitioner, so records with one key keep their order.
 *
 * Appends go through one idempotent producer with acks=all: an append resolves once every in-sync
 * replica has the records. kafkajs' idempotent producer breaks on concurrent sends (sequence
 * numbers arrive out of order), so appends queue and are sent one request at a time; appends that
 * arrive while a request is in flight share the next one (group commit, as the file log does).
 *
 * A subscription is a kafkajs consumer in the group, with auto-commit off: a partition's batch
 * goes to `handle`, and the offset after it is committed only once `handle` resolved. A throwing
 * `handle` gets the same batch again after a pause (50ms..1s), heartbeating meanwhile. `startAt`
 * is asked when a partition is assigned: `earliest` and `{ offset }` seek there, `committed` keeps
 * the group's committed offset (the earliest when there is none).
 */
export function createKafkaEventLog(options: KafkaEventLogOptions): EventLog {
  const { clientId, partitions = 3, replicationFactor } = options;
  const warn = options.onWarning ?? (() => {});
  const kafka = new Kafka({
    clientId,
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    logCreator: () => (entry) => warn(`kafkajs ${entry.namespace}: ${entry.log.message}`),
  });
  const producer: Producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  const admin: Admin = kafka.admin();
  const partitioner = Partitioners.DefaultPartitioner();
  let connected: Promise<void> | null = null;
  const connect = (): Promise<void> => {
    connected ??= Promise.all([producer.connect(), admin.connect()]).then(
      () => undefined,
      (err: unknown) => {
        connected = null;
        throw err;
      },
    );
    return connected;
  };

  /** Partition count per topic, once the topic is known to exist. */
  const topics = new Map<string, Promise<number>>();
  const ensureTopic = (topic: string): Promise<number> => {
    if (!isTopicName(topic)) return Promise.reject(new Error(`invalid topic name "${topic}": use letters, digits, '.', '_' and '-'`));
    let known = topics.get(topic);
    if (!known) {
      known = (async () => {
        await connect();
        try {
          await admin.createTopics({
            waitForLeaders: true,
            topics: [{ topic, numPartitions: partitions, ...(replicationFactor ? { replicationFactor } : {}) }],
          });
        } catch (err) {
          // Another process may have created it first; anything else is raised by the metadata fetch.
          if (!/already exists/i.test(errorMessage(err))) warn(`creating topic ${topic}: ${errorMessage(err)}`);
        }
        const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
        const count = metadata.topics[0]?.partitions.length ?? 0;
        if (count === 0) throw new Error(`topic ${topic} has no partitions`);
        return count;
      })();
      topics.set(topic, known);
      known.catch(() => topics.delete(topic));
    }
    return known;
  };

  const partitionOf = (topic: string, key: string, count: number): number =>
    partitioner({
      topic,
      message: { key, value: null },
      partitionMetadata: Array.from({ length: count }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] })),
    });

  let queue: PendingAppend[] = [];
  let flushing: Promise<void> | null = null;
  let closed = false;

  /** Sends everything queued, one produce request at a time, until the queue stays empty. */
  async function flush(): Promise<void> {
    try {
      while (queue.length > 0) {
        // Take whole appends up to the size limit (at least one), so each append's records share one request.
        let bytes = 0;
        let take = 0;
        while (take < queue.length && (take === 0 || bytes + queue[take]!.bytes <= MAX_FLUSH_BYTES)) bytes += queue[take++]!.bytes;
        const batch = queue.slice(0, take);
        queue = queue.slice(take);

        const byTopic = new Map<string, Message[]>();
        /** Per append, per record: its index among the messages of its topic-partition in this request. */
        const indexes: number[][] = [];
        const counts = new Map<string, number>();
        for (const append of batch) {
          const messages = byTopic.get(append.topic) ?? [];
          byTopic.set(append.topic, messages);
          indexes.push(
            append.records.map((record, i) => {
              const partition = append.partitions[i]!;
              messages.push({ key: record.key, value: record.value, partition });
              const key = positionKey({ topic: append.topic, partition });
              const index = counts.get(key) ?? 0;
              counts.set(key, index + 1);
              return index;
            }),
          );
        }
        try {
          const sent = await producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
          const base = new Map(sent.map((m) => [positionKey({ topic: m.topicName, partition: m.partition }), Number(m.baseOffset ?? m.offset)]));
          batch.forEach((append, a) => {
            append.resolve(
              append.records.map((_, i) => {
                const partition = append.partitions[i]!;
                const first = base.get(positionKey({ topic: append.topic, partition }));
                if (first === undefined || Number.isNaN(first)) throw new Error(`kafka returned no offset for ${append.topic}:${partition}`);
                return { topic: append.topic, partition, offset: first + indexes[a]![i]! };
              }),
            );
          });
        } catch (err) {
          for (const append of batch) append.reject(err);
        }
      }
    } finally {
      flushing = null;
    }
  }

  const subscriptions = new Set<KafkaSubscription>();

  return {
    async append(topic, records) {
      if (closed) throw new Error('kafka event log is closed');
      if (records.length === 0) return [];
      const count = await ensureTopic(topic);
      const bytes = records.reduce((sum, r) => sum + Buffer.byteLength(r.key) + Buffer.byteLength(r.value) + 64, 0);
      return new Promise<LogPosition[]>((resolve, reject) => {
        queue.push({ topic, records, partitions: records.map((r) => partitionOf(topic, r.key, count)), bytes, resolve, reject });
        flushing ??= flush();
      });
    },

    async subscribe(subscribeOptions) {
      if (closed) throw new Error('kafka event log is closed');
      const wanted = [...new Set(subscribeOptions.topics)];
      if (wanted.length === 0) throw new Error('subscribe needs at least one topic');
      await Promise.all(wanted.map(ensureTopic));
      const consumer = kafka.consumer({
        groupId: subscribeOptions.group,
        allowAutoTopicCreation: false,
        // Short fetch waits keep waitFor (session consistency) quick when the topic is quiet.
        maxWaitTimeInMs: 100,
        retry: { retries: 10 },
      });
      const subscription = new KafkaSubscription(subscribeOptions, wanted, consumer, admin, warn, () => subscriptions.delete(subscription));
      await subscription.start();
      subscriptions.add(subscription);
      return subscription;
    },

    async endOffsets(topic) {
      if (closed) throw new Error('kafka event log is closed');
      await ensureTopic(topic);
      const offsets = await admin.fetchTopicOffsets(topic);
      return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((s) => s.stop()));
      await flushing;
      // Also after a failed connect: the other client may still be retrying in the background.
      await connected?.catch(() => {});
      await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
    },
  };
}

/** One consumer in a group; its handled offsets answer `waitFor`. */
class KafkaSubscription implements Subscription {
  private readonly handledPositions: HandledPositions;
  private readonly pauses = new Pauses();
  /** Per assigned partition: the offset it was told to start at (null: committed), once `startAt` answered. */
  private readonly starts = new Map<string, Promise<number | null>>();
  private readonly topics: Set<string>;
  private stopping = false;
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly options: SubscribeOptions,
    topics: string[],
    private readonly consumer: Consumer,
    private readonly admin: Admin,
    private readonly warn: (message: string) => void,
    private readonly onStopped: () => void,
  ) {
    this.topics = new Set(topics);
    this.handledPositions = new HandledPositions(this.topics);
  }

  async start(): Promise<void> {
    const { consumer } = this;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      for (const [topic, partitions] of Object.entries(payload.memberAssignment)) {
        for (const partition of partitions) {
          // Asked once per partition: when a rebalance hands it back, the committed offset is where this subscription stopped.
          if (this.starts.has(positionKey({ topic, partition }))) continue;
          const start = this.seekTo(topic, partition);
          start.catch((err: unknown) => this.warn(`consumer group ${this.options.group}: startAt for ${topic}:${partition} failed: ${errorMessage(err)}`));
          this.starts.set(positionKey({ topic, partition }), start);
        }
      }
    });
    await consumer.connect();
    // fromBeginning: a group without a committed offset starts at the earliest record.
    await consumer.subscribe({ topics: [...this.topics], fromBeginning: true });
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: (payload) => this.eachBatch(payload) });
  }

  /** Asks `startAt` and seeks there; resolves with the offset sought, or null for the committed one. */
  private async seekTo(topic: string, partition: number): Promise<number | null> {
    const at: StartAt = (await this.options.startAt?.(topic, partition)) ?? 'committed';
    if (at === 'committed') return null;
    const bounds = (await this.admin.fetchTopicOffsets(topic)).find((o) => o.partition === partition);
    const low = Number(bounds?.low ?? 0);
    const high = Number(bounds?.high ?? 0);
    if (at !== 'earliest' && (!Number.isSafeInteger(at.offset) || at.offset < 0)) throw new Error(`invalid start offset ${at.offset} for ${topic}:${partition}`);
    // Clamped into the partition's range, so the seek lands on a record (or the end) and never resets.
    const offset = at === 'earliest' ? low : Math.min(Math.max(at.offset, low), high);
    this.consumer.seek({ topic, partition, offset: String(offset) });
    // Starting at an offset means everything before it counts as handled (waitFor resolves for it).
    if (offset > 0) this.handledPositions.mark(positionKey({ topic, partition }), offset - 1);
    return offset;
  }

  private async eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic, partition } = batch;
    const key = positionKey({ topic, partition });
    const start = await (this.starts.get(key) ?? Promise.resolve(null));
    // A batch fetched before the seek took effect is dropped unresolved: the next fetch starts at the seek.
    if (isStale()) return;
    const maxBatch = this.options.maxBatch ?? 500;
    const records: LogRecord[] = [];
    for (const message of batch.messages) {
      const offset = Number(message.offset);
      if (start !== null && offset < start) continue;
      records.push({ topic, partition, offset, key: message.key?.toString('utf8') ?? '', value: message.value?.toString('utf8') ?? '', timestamp: Number(message.timestamp) });
    }
    for (let from = 0; from < records.length; from += maxBatch) {
      if (!isRunning() || isStale() || this.stopping) return;
      const chunk = records.slice(from, from + maxBatch);
      if (!(await this.deliver(chunk, heartbeat))) return;
      const last = chunk.at(-1)!.offset;
      resolveOffset(String(last));
      await this.consumer.commitOffsets([{ topic, partition, offset: String(last + 1) }]);
      this.handledPositions.mark(key, last);
      await heartbeat();
    }
  }

  /** Heartbeats between tries, so a slow retry does not cost the partition. */
  private deliver(records: LogRecord[], heartbeat: () => Promise<void>): Promise<boolean> {
    const first = records[0]!;
    return deliverUntilHandled(this.options.handle, records, {
      pauses: this.pauses,
      stopping: () => this.stopping,
      warn: this.warn,
      describe: `consumer group ${this.options.group}: handling ${first.topic}:${first.partition} offsets ${first.offset}..${records.at(-1)!.offset}`,
      betweenTries: heartbeat,
    });
  }

  handled(): ReadonlyMap<string, number> {
    return this.handledPositions.offsets;
  }

  waitFor(positions: readonly LogPosition[], timeoutMs: number): Promise<boolean> {
    return this.handledPositions.waitFor(positions, timeoutMs);
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      this.pauses.cutAll();
      // Waits for the batch in flight, then leaves the group so its partitions move on at once.
      await this.consumer.disconnect();
      this.handledPositions.close();
      this.onStopped();
    })();
    return this.stopped;
  }
}
