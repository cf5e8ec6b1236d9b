import { EventEnvelopeSchema, peekEnvelope, type EventEnvelope } from '@castie/contracts';
import Database from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import { join } from 'node:path';
import type { z } from 'zod';
import type { LogRecord } from '../ports/event-log.ts';
import { ConcurrencyError, type EventStore, type ExpectedVersion } from '../ports/event-store.ts';
import { backgroundCheckpoints } from '../sqlite/background-checkpoints.ts';
import { IdFilter } from '../sqlite/id-filter.ts';
import type { FileEventLog } from './file-event-log.ts';

export interface LogEventStoreOptions {
  log: FileEventLog;
  /** The topic holding this store's events, key = stream id. The store must be its only writer. */
  topic: string;
  /**
   * The stream index: a SQLite file of (stream, version) -> log offset, by default
   * `<log dir>/<topic>.streams.db`. It is derived from the log: created when missing, and caught
   * up with the log's tail at open.
   */
  indexPath?: string;
  /** Told how a missing or lagging index is caught up (records, seconds). */
  onProgress?: (message: string) => void;
  /**
   * WAL checkpoints in the process's checkpoint thread once caught up (default true). A thread
   * that only builds the index at a first start, then closes it, does without (its close
   * checkpoints).
   */
  backgroundCheckpoints?: boolean;
}

/** The embedded event store, plus what its own tests look at. */
export interface LogEventStore extends EventStore {
  /**
   * Resolves once every stream the index held at open is known in memory: from then on a stream
   * that does not exist yet is read without asking the index. Rejects only if the store closed
   * first.
   */
  streamsKnown(): Promise<void>;
}

/** Where a topic's stream index is kept by default: `<log dir>/<topic>.streams.db`. */
export const streamIndexPath = (logDir: string, topic: string): string => join(logDir, `${topic}.streams.db`);

/** The two fields of an envelope the stream index is made of. */
const StreamPositionSchema = EventEnvelopeSchema.pick({ streamId: true, streamVersion: true });
type StreamPosition = z.infer<typeof StreamPositionSchema>;

const satisfies = (expected: ExpectedVersion, current: number): boolean =>
  expected === 'any' || (expected === 'no_stream' ? current === 0 : expected === current);

/** Records read from the log at a time while indexing (and indexed per transaction when resuming). */
const CATCH_UP_BATCH = 5000;
/** Bytes of event JSON kept for recently read or written streams. */
const RECENT_STREAMS_BYTES = 32 * 1024 * 1024;
/** Streams whose version is kept (about 150 bytes each). */
const KNOWN_VERSIONS = 50_000;
/** A UTF-16 surrogate without its pair: UTF-8 (the log's keys) cannot hold it. */
const LONE_SURROGATE = /\p{Cs}/u;
/** Rows of the index read at a time while learning which streams exist: well under a millisecond each (requests wait for no more), however long the streams. */
const LEARN_ROWS = 1000;

/**
 * The event store of the embedded profile, on an event log topic. The log holds the events; a
 * stream index (SQLite, beside the log) maps each stream's versions to log offsets, so a start
 * reads only the log's tail that the index has not seen, and reading a stream reads just its
 * records. Held in memory: only the recently read or written streams, within a byte budget.
 *
 * The index commits its rows together with the offset it has indexed up to, after the log made
 * the events durable: a crash in between leaves records the index has not seen, and the next
 * open indexes them from the log. Expected versions are checked within this process: appends to
 * one stream run one after another (check and reservation happen synchronously once the
 * previous append settled), appends to different streams share the log's group commit.
 */
export async function createLogEventStore({ log, topic, indexPath, onProgress, backgroundCheckpoints: inBackground = true }: LogEventStoreOptions): Promise<LogEventStore> {
  const db = new Database(indexPath ?? streamIndexPath(log.dir, topic));
  db.pragma('journal_mode = WAL');
  // A crash may lose the last commits, never consistency: the lost rows come back from the log.
  db.pragma('synchronous = NORMAL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS events (stream TEXT NOT NULL, version INTEGER NOT NULL, offset INTEGER NOT NULL, PRIMARY KEY (stream, version)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS indexed (topic TEXT PRIMARY KEY, next INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS known_streams (topic TEXT PRIMARY KEY, next INTEGER NOT NULL, filter BLOB NOT NULL) WITHOUT ROWID;
  `);
  const versionOf = db.prepare<[string], number>('SELECT max(version) FROM events WHERE stream = ?').pluck();
  const offsetsOf = db.prepare<[string], number>('SELECT offset FROM events WHERE stream = ? ORDER BY version').pluck();
  const offsetsAfter = db.prepare<[string, number], number>('SELECT offset FROM events WHERE stream = ? AND version > ? ORDER BY version').pluck();
  const insert = db.prepare('INSERT OR IGNORE INTO events (stream, version, offset) VALUES (?, ?, ?)');
  const offsetAt = db.prepare<[string, number], number>('SELECT offset FROM events WHERE stream = ? AND version = ?').pluck();
  const isEmpty = db.prepare('SELECT 1 FROM events LIMIT 1').pluck();
  const nextOf = db.prepare<[string], number>('SELECT next FROM indexed WHERE topic = ?').pluck();
  const setNext = db.prepare('INSERT INTO indexed (topic, next) VALUES (?, ?) ON CONFLICT (topic) DO UPDATE SET next = excluded.next');
  const index = db.transaction((rows: { stream: string; version: number; offset: number }[], next: number) => {
    for (const r of rows) insert.run(r.stream, r.version, r.offset);
    setNext.run(topic, next);
  });

  /**
   * Every stream that exists, as a Bloom filter: most commands read a stream that does not exist
   * yet (each forecast is a stream of its own), and asking the index to find nothing, one read
   * transaction each, was 3.4 % of the server's time under a load of forecasts. A new index adds
   * its streams as it is built; an existing one's are learned in chunks after open
   * (`learnStreams`); appends add theirs before they land. Until it knows them all, the index is
   * asked, as before. Bounded: 2-4 bytes per stream (IdFilter).
   *
   * A store that closes keeps the filter beside the index (`known_streams`, as of its own `next`,
   * see close), and the next open takes it instead of learning: learning reads every row of the
   * index, about a second of CPU after each start on the seeded history. Taken once (deleted at
   * open): after a crash, or if the index moved on without it, the streams are learned again.
   */
  const saved = db.prepare<[string], { next: number; filter: Buffer }>('SELECT next, filter FROM known_streams WHERE topic = ?').get(topic);
  db.prepare('DELETE FROM known_streams WHERE topic = ?').run(topic);
  const restored = saved && saved.next === (nextOf.get(topic) ?? 0) ? IdFilter.fromBytes(saved.filter) : null;
  const knownStreams = restored ?? new IdFilter();
  let allKnown = restored !== null;
  /** False only for a stream that certainly has no event (nor an append in flight). */
  const mayExist = (streamId: string): boolean => !allKnown || knownStreams.mayHave(streamId);

  /** The first offset the index has not seen; appends move it only while it stays contiguous. */
  let next: number;
  try {
    next = await catchUp();
  } catch (error) {
    // A log the index cannot follow (or cannot be read) opens nothing: the index goes with it.
    db.close();
    throw error;
  }
  // Caught up: from now on the process's checkpoint thread moves the WAL into the file, not a
  // commit on the event loop (the commit's own checkpoint waits until 16 MB, should it fall behind).
  db.pragma(`wal_autocheckpoint = ${(16 * 1024 * 1024) / (db.pragma('page_size', { simple: true }) as number)}`);
  const stopCheckpoints = inBackground ? backgroundCheckpoints.watch(db.name) : async () => undefined;

  // Index rows of appends wait for the end of the event loop's turn and commit together (one
  // SQLite transaction for every append of a group commit). Until then they answer from here.
  let pending: { stream: string; version: number; offset: number }[] = [];
  const pendingOffsets = new Map<string, number[]>();
  let flushScheduled = false;
  const flush = () => {
    flushScheduled = false;
    if (pending.length === 0) return;
    index(pending, next);
    pending = [];
    pendingOffsets.clear();
  };
  /**
   * Streams read or written lately, as their events: a command reads its stream again and again
   * (many users forecast one Castie). This store is its topic's only writer, so an entry is kept
   * current by its appends: it is set only when its length is the stream's version, and each
   * append extends it, so it holds every event of its stream and its length is the version.
   */
  const recent = new LRUCache<string, { events: EventEnvelope[]; bytes: number }>({ maxSize: RECENT_STREAMS_BYTES, sizeCalculation: (entry) => Math.max(1, entry.bytes) });

  /**
   * Streams' versions, kept as `recent` is kept current (this store is the only writer): learned
   * from the index once, moved by each append. A command on a state its handler kept asks for the
   * events after that state's version: mostly there are none, and this answers so without a query
   * (one read transaction of the index, with its locks, was two system calls of every forecast).
   */
  const versions = new LRUCache<string, number>({ max: KNOWN_VERSIONS });
  const currentVersion = (streamId: string): number => {
    const known = recent.peek(streamId);
    if (known) return known.events.length;
    let version = versions.get(streamId);
    if (version === undefined) versions.set(streamId, (version = mayExist(streamId) ? (versionOf.get(streamId) ?? 0) + (pendingOffsets.get(streamId)?.length ?? 0) : 0));
    return version;
  };

  /**
   * Learns the index's streams (see `knownStreams`), LEARN_ROWS rows of it per turn of the event
   * loop (by rows, not streams: a person's inbox stream grows with every sign-in); false if the
   * store closed first. Every stream has a version 1 (build, resume and appends number from 1).
   * It reads through a connection of its own with a small page cache, closed when done: through
   * the index's own connection it filled that connection's page cache (16 MB) with pages no
   * command asks for again, 55-90 MB more resident memory after a start for all topics.
   */
  async function learnStreams(): Promise<boolean> {
    const reader = new Database(db.name, { readonly: true, fileMustExist: true });
    try {
      reader.pragma('cache_size = -256');
      const rowsAfter = reader.prepare<[string, number, number], [string, number]>('SELECT stream, version FROM events WHERE (stream, version) > (?, ?) ORDER BY stream, version LIMIT ?').raw();
      let stream = '';
      let version = 0;
      while (!closed) {
        const rows = rowsAfter.all(stream, version, LEARN_ROWS);
        for (const [id, v] of rows) if (v === 1) knownStreams.add(id);
        if (rows.length < LEARN_ROWS) return (allKnown = true);
        [stream, version] = rows[rows.length - 1]!;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      return false;
    } finally {
      reader.close();
    }
  }

  /** Appends so far, to any stream: a stream read while none landed was read whole. */
  let appends = 0;
  /** Per stream: settles when its append in flight has finished (appended or failed). */
  const inFlight = new Map<string, Promise<void>>();
  let closed = false;

  /**
   * Indexes what the log holds beyond the index (a crash after a durable append, or a new index).
   * Idempotent: a record already indexed at its version and offset is skipped; anything else that
   * does not follow its stream's last version stops the start, as it would hand out wrong versions.
   */
  async function catchUp(): Promise<number> {
    const end = (await log.endOffsets(topic)).get(0) ?? 0;
    const next = nextOf.get(topic) ?? 0;
    if (next >= end) return next;
    const started = Date.now();
    const fresh = isEmpty.get() === undefined;
    const reached = fresh ? await build(end) : await resume(next, end);
    // A new index is always said (a first start, or one deleted); a tail, when long.
    if (fresh || reached - next > CATCH_UP_BATCH) onProgress?.(`${topic}: indexed ${reached - next} events of the log in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return reached;
  }

  /**
   * A new (or never committed) index: the whole log is read into memory, one list of offsets per
   * stream, then written in key order in one transaction with its `next`. Nothing is asked of
   * SQLite per record, the B-tree is filled in order, and a crash before the commit leaves an
   * empty index that the next open builds again: a half-built index is never trusted.
   */
  async function build(end: number): Promise<number> {
    const offsets = new Map<string, number[]>();
    let next = 0;
    while (next < end) {
      const records = await log.read(topic, next, CATCH_UP_BATCH);
      if (records.length === 0) break;
      for (const record of records) {
        const { streamId, streamVersion } = positionOf(record);
        let stream = offsets.get(record.key);
        if (!stream) offsets.set(record.key, (stream = []));
        if (streamId !== record.key || streamVersion !== stream.length + 1) {
          throw new Error(`${topic}@0:${record.offset}: event ${streamId}@${streamVersion} does not follow version ${stream.length} of stream ${record.key}`);
        }
        stream.push(record.offset);
      }
      next = records[records.length - 1]!.offset + 1;
    }
    // UTF-16 order is SQLite's (UTF-8 byte) order for the ASCII ids streams have; any other order
    // would only make the inserts slower.
    const streams = [...offsets.keys()].sort();
    db.transaction(() => {
      for (const stream of streams) offsets.get(stream)!.forEach((offset, i) => insert.run(stream, i + 1, offset));
      setNext.run(topic, next);
    })();
    for (const stream of streams) knownStreams.add(stream);
    allKnown = true;
    return next;
  }

  /** An index behind the log's tail (usually by the few records of a crash): indexed record by record, checked against the rows already there. */
  async function resume(from: number, end: number): Promise<number> {
    let next = from;
    const versions = new Map<string, number>();
    while (next < end) {
      const records = await log.read(topic, next, CATCH_UP_BATCH);
      if (records.length === 0) break;
      const rows: { stream: string; version: number; offset: number }[] = [];
      for (const record of records) {
        const { streamId, streamVersion } = positionOf(record);
        const indexedAt = offsetAt.get(record.key, streamVersion);
        if (indexedAt === record.offset) {
          versions.set(record.key, streamVersion);
          if (streamVersion === 1) knownStreams.add(record.key);
          continue;
        }
        const last = versions.get(record.key) ?? versionOf.get(record.key) ?? 0;
        if (streamId !== record.key || streamVersion !== last + 1 || indexedAt !== undefined) {
          throw new Error(`${topic}@0:${record.offset}: event ${streamId}@${streamVersion} does not follow version ${last} of stream ${record.key}`);
        }
        versions.set(record.key, last + 1);
        if (last === 0) knownStreams.add(record.key);
        rows.push({ stream: record.key, version: last + 1, offset: record.offset });
      }
      next = records[records.length - 1]!.offset + 1;
      index(rows, next);
    }
    return next;
  }

  /**
   * Where a record says it belongs: all the index needs (reading a stream checks whole events).
   * Read from the head of its JSON as this store writes it; anything else is parsed whole.
   */
  function positionOf(record: LogRecord): StreamPosition {
    return peekEnvelope(record.value) ?? StreamPositionSchema.parse(JSON.parse(record.value));
  }

  function parse(record: LogRecord): EventEnvelope {
    return EventEnvelopeSchema.parse(JSON.parse(record.value));
  }

  /** A stream's records: contiguous offsets are read together. */
  async function recordsOf(offsets: readonly number[]): Promise<LogRecord[]> {
    const out: LogRecord[] = [];
    for (let i = 0; i < offsets.length; ) {
      let j = i + 1;
      while (j < offsets.length && offsets[j] === offsets[j - 1]! + 1) j++;
      out.push(...(await log.read(topic, offsets[i]!, j - i)));
      i = j;
    }
    return out;
  }

  // A new index knows its streams already (build); an existing one learns them now, in the background.
  // Should reading them fail, the index goes on answering every read, as before.
  const learning = allKnown ? Promise.resolve(true) : learnStreams().catch(() => false);

  return {
    topic,

    streamsKnown: () =>
      learning.then((all) => {
        if (!all) throw new Error(`event store on ${topic} closed before it knew its streams`);
      }),

    async readStream(streamId, { afterVersion = 0 } = {}) {
      // Closed, it would still answer from memory what it kept, and fail on what it did not.
      if (closed) throw new Error(`event store on ${topic} is closed`);
      const known = recent.get(streamId);
      if (known) return { version: known.events.length, events: known.events.slice(afterVersion) };
      if (!mayExist(streamId)) {
        if (afterVersion === 0) versions.set(streamId, 0);
        return { version: afterVersion, events: [] };
      }
      if (afterVersion > 0 && currentVersion(streamId) === afterVersion) return { version: afterVersion, events: [] };
      // The index's rows after `afterVersion`, then the appends whose rows wait for the next flush
      // (the versions after the index's last); both read in this same turn, so they join up.
      const indexed = afterVersion > 0 ? (versionOf.get(streamId) ?? 0) : 0;
      const offsets = afterVersion > 0 ? offsetsAfter.all(streamId, afterVersion) : offsetsOf.all(streamId);
      const waiting = pendingOffsets.get(streamId) ?? [];
      // Read whole, the stream's version is known now: its append (a new stream's, mostly: a
      // forecast is one) asks the index nothing again.
      if (afterVersion === 0) versions.set(streamId, offsets.length + waiting.length);
      const appendsBefore = appends;
      const records = await recordsOf([...offsets, ...(afterVersion > indexed ? waiting.slice(afterVersion - indexed) : waiting)]);
      const events = records.map(parse);
      // Kept only if no append landed while the records were read (the check and the set are
      // atomic): none at all in this store (no query), or none to this stream.
      if (afterVersion === 0 && events.length > 0 && (appends === appendsBefore || currentVersion(streamId) === events.length)) recent.set(streamId, { events: [...events], bytes: records.reduce((n, r) => n + r.value.length, 0) });
      return { version: Math.max(afterVersion, events.at(-1)?.streamVersion ?? 0), events };
    },

    async appendToStream(streamId, events, { expectedVersion }) {
      if (closed) throw new Error(`event store on ${topic} is closed`);
      // Validate before reserving, so a bad event never holds up the stream.
      // The log keeps keys as UTF-8: a lone surrogate would come back as another id (U+FFFD).
      if (LONE_SURROGATE.test(streamId)) throw new Error(`stream id ${JSON.stringify(streamId)} is not well-formed Unicode`);
      const checked = events.map((event) => {
        const envelope = EventEnvelopeSchema.parse({ ...event, streamVersion: 1 });
        if (envelope.streamId !== streamId) throw new Error(`event ${envelope.id} belongs to stream ${envelope.streamId}, not ${streamId}`);
        return envelope;
      });
      for (let busy = inFlight.get(streamId); busy; busy = inFlight.get(streamId)) await busy;
      // Closed while it waited behind an append to its stream: close waits only for those in flight.
      if (closed) throw new Error(`event store on ${topic} is closed`);

      // From here to the append call nothing awaits: the check and the reservation are atomic.
      const current = currentVersion(streamId);
      if (!satisfies(expectedVersion, current)) throw new ConcurrencyError(streamId, expectedVersion, current);
      if (checked.length === 0) return { version: current, positions: [] };
      const envelopes = checked.map((envelope, i) => ({ ...envelope, streamVersion: current + i + 1 }));
      let release!: () => void;
      inFlight.set(streamId, new Promise<void>((resolve) => (release = resolve)));
      // A new stream is known before it lands: a read meanwhile asks the index (and finds what
      // has landed). Once only: every add counts against the filter's size.
      if (current === 0) knownStreams.add(streamId);
      try {
        const values = envelopes.map((envelope) => JSON.stringify(envelope));
        const positions = await log.append(
          topic,
          values.map((value) => ({ key: streamId, value })),
        );
        appends++;
        // The log resolves appends in offset order, so `next` normally moves with every append;
        // should one ever be indexed before an earlier one, `next` waits and the next open
        // indexes from there again (idempotently), so no record is ever skipped.
        if (positions[0]!.offset === next) next = positions[positions.length - 1]!.offset + 1;
        const offsets = pendingOffsets.get(streamId) ?? [];
        positions.forEach((p, i) => {
          pending.push({ stream: streamId, version: current + i + 1, offset: p.offset });
          offsets.push(p.offset);
        });
        pendingOffsets.set(streamId, offsets);
        versions.set(streamId, current + envelopes.length);
        const known = recent.get(streamId);
        if (known && known.events.length === current) {
          recent.set(streamId, { events: [...known.events, ...envelopes], bytes: known.bytes + values.reduce((n, v) => n + v.length, 0) });
        } else recent.delete(streamId);
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flush);
        }
        return { version: current + envelopes.length, positions };
      } finally {
        inFlight.delete(streamId);
        release();
      }
    },

    async close() {
      closed = true;
      // Appends queued behind these are refused once they wake (see appendToStream); none starts after.
      while (inFlight.size > 0) await Promise.all(inFlight.values());
      flush();
      // For the next open, as of this store's `next` (see knownStreams): each record below it was
      // indexed when the store opened or appended by it, and the next open reads the rows from
      // there again (resume), adding their new streams, those of another store on the same index
      // too (which must not be, but nothing stops it). Only if the index is where this store left
      // it, and at best: a full disk must not keep the store from closing.
      try {
        if (allKnown && nextOf.get(topic) === next) db.prepare('INSERT OR REPLACE INTO known_streams (topic, next, filter) VALUES (?, ?, ?)').run(topic, next, knownStreams.toBytes());
      } catch {
        // Not kept: the next open learns the streams from the index.
      }
      await stopCheckpoints();
      db.close();
    },
  };
}
