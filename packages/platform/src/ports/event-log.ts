/**
 * The event log port: topics of ordered records, consumed by consumer groups.
 *
 * Shaped after Kafka (kafkajs) so that both adapters fit: a topic has partitions; a record's key
 * picks its partition, so records with one key keep their order; a consumer group receives every
 * record at least once and commits its position after handling. The embedded adapter has one
 * partition per topic and keeps the log on disk.
 */
export interface LogPosition {
  topic: string;
  partition: number;
  /** Offset of the record inside its partition, from 0. */
  offset: number;
}

export interface LogRecord extends LogPosition {
  key: string;
  /** The record's payload: one JSON document (an event envelope). */
  value: string;
  /** Milliseconds since the epoch when the log accepted the record. */
  timestamp: number;
  /**
   * Set on a dead letter an operator replays (ProjectionRunner.replay): it is applied after later
   * records of its partition, which guards by "the last offset applied" (updateOnce) would take
   * for having applied it already.
   */
  replayed?: true;
}

export interface NewLogRecord {
  key: string;
  value: string;
}

/** Where a consumer starts in one partition when it has no position of its own. */
export type StartAt = 'earliest' | 'committed' | { offset: number };

export interface SubscribeOptions {
  /** Consumer group: members of one group share the work; each group sees every record. */
  group: string;
  topics: string[];
  /**
   * Where to start in each partition: 'committed' resumes after the group's last committed
   * position (earliest when none), 'earliest' replays everything, { offset } starts there.
   * Called once per assigned partition.
   */
  startAt?: (topic: string, partition: number) => StartAt | Promise<StartAt>;
  /**
   * Handles records of one partition, in order. Resolving commits the position after the last
   * record; throwing redelivers the batch (after a pause). Batches may be redelivered after a crash.
   */
  handle: (records: LogRecord[]) => Promise<void>;
  /** Largest batch handed to `handle` (default 500). */
  maxBatch?: number;
  /**
   * Shortest time between the starts of two batches of a partition (default 0), or that time as
   * a function of how many records the last batch held (a busier partition may wait longer). While
   * records keep coming, those that arrive meanwhile share one batch (for a projection: one unit
   * of work, one commit); a record that comes to an idle consumer is handed over at once. Adapters
   * that batch by themselves (Kafka's fetch) may ignore it.
   */
  batchIntervalMs?: number | ((lastBatchRecords: number) => number);
  /**
   * The same, while someone waits (`waitFor`) for a record of the partition that no batch has
   * read yet (default, and at most, `batchIntervalMs`): the next batch starts this long after the
   * last one began instead. A longer `batchIntervalMs` then lets a load that nobody waits on share
   * larger batches, while a writer reading back its own write waits no longer than this.
   */
  waitedBatchIntervalMs?: number;
}

export interface Subscription {
  /** Offset of the last record handled per `topic:partition` (absent: nothing handled yet). */
  handled(): ReadonlyMap<string, number>;
  /**
   * Resolves true once every given position of a topic this subscription reads has been handled,
   * false when `timeoutMs` passed first. Positions of other topics are ignored.
   */
  waitFor(positions: readonly LogPosition[], timeoutMs: number): Promise<boolean>;
  /** Stops consuming; in-flight batches finish first. */
  stop(): Promise<void>;
}

export interface EventLog {
  /**
   * Set where a record may be published again, as a copy at a later offset of its partition, at
   * most this many records after the first: the cluster's log, fed by the outbox relay of the
   * MongoDB event store (its REPUBLISHED_WITHIN). Consumers that must not apply an event twice skip
   * the copies (the projection runner does). Unset: no record is ever published twice.
   */
  readonly republishedWithin?: number;
  /**
   * Appends records to a topic and resolves with their positions, in input order, once the log
   * has made them durable (an acknowledged append survives a crash of the process).
   */
  append(topic: string, records: readonly NewLogRecord[]): Promise<LogPosition[]>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** Offset the next record of each partition will get, as `topic:partition` -> offset. */
  endOffsets(topic: string): Promise<Map<number, number>>;
  close(): Promise<void>;
}

export const positionKey = (p: { topic: string; partition: number }): string => `${p.topic}:${p.partition}`;
