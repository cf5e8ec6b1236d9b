import { randomUUID } from 'node:crypto';
import { EventEnvelopeSchema, type EventEnvelope } from '@castie/contracts';
import { MongoServerError, ObjectId, type Collection, type Db } from 'mongodb';
import type { EventLog, LogPosition } from '../ports/event-log.ts';
import { ConcurrencyError, type EventStore, type ExpectedVersion } from '../ports/event-store.ts';

export interface MongoEventStoreOptions {
  /** The service's write-side database (not its read-model database, which `dropAll` may drop). */
  db: Db;
  /** The topic the relay publishes to (key = stream id). This store is the topic's only writer. */
  topic: string;
  /** Where the relay publishes (Kafka in the cluster). */
  log: EventLog;
  /** Told about relay failures (retried) and appends that returned before they were published. */
  onWarning?: (message: string) => void;
  /** How long `appendToStream` waits for the relay before it returns without positions (default 10 s). */
  publishTimeoutMs?: number;
  /** Pause of an idle relay between looks for commits of other processes (default 50 ms). */
  relayIdleMs?: number;
}

/**
 * One append: the events of one `appendToStream`, stored as one document so that an append is
 * atomic without a transaction. `streamVersion` is the version of its first event: the unique index
 * on {streamId, streamVersion} lets only one append follow a given version (see `appendToStream`).
 */
interface Commit {
  _id: ObjectId;
  topic: string;
  streamId: string;
  streamVersion: number;
  lastVersion: number;
  /** Per topic, increasing in causal order: an append takes its number after reading its stream. */
  seq: number;
  /** The envelopes as JSON text, exactly as published (no BSON round trip can change them). */
  events: string[];
  published: boolean;
  /** Set by the relay: where each event landed in the log. */
  positions?: { partition: number; offset: number }[];
  appendedAt: Date;
}

interface Lease {
  _id: string;
  owner: string;
  until: Date;
}

const EVENTS = 'events';
const SEQUENCES = 'event_sequences';
const LEASES = 'event_relay_leases';
const LEASE_MS = 5_000;
const RELAY_BATCH = 500;
/**
 * How many records of a partition after the first a copy the relay published again comes, at
 * most (the log's `republishedWithin`, which consumers remember): a relay that dies between
 * publishing a batch (RELAY_BATCH_EVENTS events at most, unless one commit holds more) and marking
 * it published has it published again right after, by itself or the next relay. Not bounded: a
 * relay that lost its lease while its append hung (a broker failover longer than the lease) can
 * land its copies after the next relay published many batches (deploy/README.md, Delivery).
 */
export const REPUBLISHED_WITHIN = 2000;
/** Events of one relay batch, at most (one commit always goes whole): half of REPUBLISHED_WITHIN. */
export const RELAY_BATCH_EVENTS = REPUBLISHED_WITHIN / 2;
const APPEND_ATTEMPTS = 20;

const satisfies = (expected: ExpectedVersion, current: number): boolean =>
  expected === 'any' || (expected === 'no_stream' ? current === 0 : expected === current);
const isDuplicateKey = (err: unknown): boolean => err instanceof MongoServerError && err.code === 11000;
const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The cluster's event store on MongoDB, with a transactional outbox to the event log.
 *
 * Writes: an append reads the stream's last version, checks the expected version and inserts one
 * commit document starting at the next version. Two appends that read the same version both try
 * to insert that start version; the unique index {streamId, streamVersion} lets one win, the other
 * gets ConcurrencyError. A stream's commits never overlap, since each starts right after the last
 * version its writer saw. Stream ids must be unique within the database (all topics of a service).
 *
 * Publishing: commits carry `published: false` until the relay has appended their events to the
 * topic, in `seq` order (so each stream's events in version order), and stored the positions.
 * `appendToStream` resolves with those positions, so a reader can wait for them (session
 * consistency). One relay per topic runs at a time, held by a lease in MongoDB; the other
 * processes' appends wait for their commit to be marked published.
 *
 * Delivery is at least once: a relay that dies after appending to the log but before marking the
 * commits published (or that loses its lease mid-batch) publishes them again, so consumers see
 * duplicates, never gaps; each stream's events keep their order. The copies land at new offsets,
 * right after the first ones (REPUBLISHED_WITHIN): the projection runner remembers that many
 * events of each partition and skips a copy (service/recent-events.ts). If the log is
 * unreachable, appends still succeed once stored: after `publishTimeoutMs` they resolve without
 * positions and the relay publishes when the log is back.
 */
export async function createMongoEventStore(options: MongoEventStoreOptions): Promise<EventStore> {
  const { db, topic, log } = options;
  const warn = options.onWarning ?? (() => {});
  const publishTimeoutMs = options.publishTimeoutMs ?? 10_000;
  const idleMs = options.relayIdleMs ?? 50;
  const commits: Collection<Commit> = db.collection<Commit>(EVENTS);
  const sequences = db.collection<{ _id: string; seq: number }>(SEQUENCES);
  const leases = db.collection<Lease>(LEASES);
  await commits.createIndex({ streamId: 1, streamVersion: 1 }, { unique: true, name: 'stream_version' });
  // Reading a stream after a version it had (a command handler that kept its folded state).
  await commits.createIndex({ streamId: 1, lastVersion: 1 }, { name: 'stream_last_version' });
  await commits.createIndex({ topic: 1, seq: 1 }, { name: 'unpublished', partialFilterExpression: { published: false } });
  // Created up front, so concurrent first appends only ever increment it.
  await sequences.updateOne({ _id: topic }, { $setOnInsert: { seq: 0 } }, { upsert: true }).catch((err: unknown) => {
    if (!isDuplicateKey(err)) throw err;
  });

  const me = randomUUID();
  let leaseUntil = 0;
  let closed = false;
  /** Appends of this process waiting for the relay, by commit id. */
  const waiting = new Map<string, (positions: LogPosition[]) => void>();
  let wake: (() => void) | null = null;
  const nudge = (): void => wake?.();

  async function currentVersion(streamId: string): Promise<number> {
    const last = await commits.findOne({ streamId }, { sort: { streamVersion: -1 }, projection: { lastVersion: 1 } });
    return last?.lastVersion ?? 0;
  }

  /** Takes or renews the topic's relay lease; false while another process holds it. */
  async function holdLease(): Promise<boolean> {
    const now = Date.now();
    if (leaseUntil - now > LEASE_MS / 2) return true;
    try {
      await leases.updateOne(
        { _id: topic, $or: [{ owner: me }, { until: { $lt: new Date(now) } }] },
        { $set: { owner: me, until: new Date(now + LEASE_MS) } },
        { upsert: true },
      );
      leaseUntil = now + LEASE_MS;
      return true;
    } catch (err) {
      // The upsert collides with the lease document another live relay holds.
      if (isDuplicateKey(err)) {
        leaseUntil = 0;
        return false;
      }
      throw err;
    }
  }

  /** Publishes one batch of unpublished commits; returns how many. */
  async function relayOnce(): Promise<number> {
    const found = await commits.find({ topic, published: false }).sort({ seq: 1 }).limit(RELAY_BATCH).toArray();
    if (found.length === 0) return 0;
    // At most RELAY_BATCH_EVENTS events (one commit, however many it holds, always goes): what a
    // relay that dies before marking them publishes again stays within what consumers remember.
    const batch = [found[0]!];
    for (let i = 1, events = found[0]!.events.length; i < found.length && (events += found[i]!.events.length) <= RELAY_BATCH_EVENTS; i++) batch.push(found[i]!);
    const positions = await log.append(
      topic,
      batch.flatMap((commit) => commit.events.map((value) => ({ key: commit.streamId, value }))),
    );
    let at = 0;
    const published = batch.map((commit) => {
      const own = positions.slice(at, (at += commit.events.length));
      return { commit, own };
    });
    await commits.bulkWrite(
      published.map(({ commit, own }) => ({
        updateOne: { filter: { _id: commit._id }, update: { $set: { published: true, positions: own.map(({ partition, offset }) => ({ partition, offset })) } } },
      })),
      { ordered: false },
    );
    for (const { commit, own } of published) {
      const resolve = waiting.get(commit._id.toHexString());
      waiting.delete(commit._id.toHexString());
      resolve?.(own);
    }
    return batch.length;
  }

  const relay = (async () => {
    let failures = 0;
    while (!closed || (waiting.size > 0 && failures === 0)) {
      let busy = false;
      try {
        if (await holdLease()) busy = (await relayOnce()) > 0;
        failures = 0;
      } catch (err) {
        failures++;
        warn(`event relay for ${topic} failed (attempt ${failures}), retrying: ${errorMessage(err)}`);
      }
      if (busy) continue;
      if (closed) break;
      const pause = failures > 0 ? Math.min(50 * 2 ** failures, 2_000) : leaseUntil > Date.now() ? idleMs : LEASE_MS / 5;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pause);
        function done(): void {
          clearTimeout(timer);
          wake = null;
          resolve();
        }
        wake = done;
      });
    }
    if (leaseUntil > Date.now()) await leases.deleteOne({ _id: topic, owner: me }).catch(() => {});
  })();

  /** Resolves with the commit's positions once published (by this process's relay or another's). */
  async function published(id: ObjectId): Promise<LogPosition[]> {
    const key = id.toHexString();
    const own = new Promise<LogPosition[]>((resolve) => waiting.set(key, resolve));
    nudge();
    const deadline = Date.now() + publishTimeoutMs;
    for (let poll = 20; Date.now() < deadline; poll = Math.min(poll * 2, 200)) {
      const result = await Promise.race([own, sleep(Math.min(poll, Math.max(deadline - Date.now(), 0))).then(() => null)]);
      if (result) return result;
      // Another process holds the lease: its relay marks our commit.
      if (leaseUntil <= Date.now()) {
        const commit = await commits.findOne({ _id: id }, { projection: { published: 1, positions: 1 } });
        if (commit?.published) {
          waiting.delete(key);
          return (commit.positions ?? []).map(({ partition, offset }) => ({ topic, partition, offset }));
        }
      }
    }
    waiting.delete(key);
    warn(`appended events of ${topic} were not published within ${publishTimeoutMs}ms; they are stored and the relay will publish them`);
    return [];
  }

  return {
    topic,

    async readStream(streamId, { afterVersion = 0 } = {}) {
      const stored = await commits.find(afterVersion > 0 ? { streamId, lastVersion: { $gt: afterVersion } } : { streamId }).sort({ streamVersion: 1 }).toArray();
      const events = stored.flatMap((commit) => commit.events.map((json) => JSON.parse(json) as EventEnvelope)).filter((e) => e.streamVersion > afterVersion);
      // Nothing after `afterVersion`: the stream is still at it (versions never go back).
      return { version: stored.at(-1)?.lastVersion ?? afterVersion, events };
    },

    async appendToStream(streamId, events, { expectedVersion }) {
      if (closed) throw new Error(`event store on ${topic} is closed`);
      const checked = events.map((event) => {
        const envelope = EventEnvelopeSchema.parse({ ...event, streamVersion: 1 });
        if (envelope.streamId !== streamId) throw new Error(`event ${envelope.id} belongs to stream ${envelope.streamId}, not ${streamId}`);
        return envelope;
      });
      for (let attempt = 1; ; attempt++) {
        const current = await currentVersion(streamId);
        if (!satisfies(expectedVersion, current)) throw new ConcurrencyError(streamId, expectedVersion, current);
        if (checked.length === 0) return { version: current, positions: [] };
        // Taken after reading the stream, so a later append to this stream always gets a larger number.
        const counter = await sequences.findOneAndUpdate({ _id: topic }, { $inc: { seq: 1 } }, { returnDocument: 'after' });
        if (!counter) throw new Error(`the sequence of ${topic} in ${SEQUENCES} is gone; reopen the store to recreate it`);
        const commit: Commit = {
          _id: new ObjectId(),
          topic,
          streamId,
          streamVersion: current + 1,
          lastVersion: current + checked.length,
          seq: counter.seq,
          events: checked.map((envelope, i) => JSON.stringify({ ...envelope, streamVersion: current + i + 1 })),
          published: false,
          appendedAt: new Date(),
        };
        try {
          await commits.insertOne(commit);
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
          // Another append took that version first; with 'any' simply go after it.
          if (expectedVersion !== 'any' || attempt >= APPEND_ATTEMPTS) throw new ConcurrencyError(streamId, expectedVersion, await currentVersion(streamId));
          continue;
        }
        return { version: commit.lastVersion, positions: await published(commit._id) };
      }
    },

    async close() {
      closed = true;
      nudge();
      await relay;
    },
  };
}
