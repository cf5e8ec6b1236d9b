import { DomainError, EventEnvelopeSchema, InvalidEventError, type DeadLetter, type DomainEvent, type EventCatalog, type EventEnvelope } from '@castie/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { collectionSpec, DeferredUnitsLostError, type CollectionSpec, type Doc, type DocumentStore, type Filter, type UnitOfWork } from '../ports/document-store.ts';
import { positionKey, type EventLog, type LogPosition, type LogRecord, type Subscription } from '../ports/event-log.ts';
import { deepFreeze } from '../deep-freeze.ts';
import { DEAD_LETTERS, deadLetterId, deadLetterView, forgetRebuiltDeadLetters, listDeadLetters, recordDeadLetter } from './dead-letters.ts';
import { RecentEvents } from './recent-events.ts';

/** One read model: which topics feed it, which collections it alone writes, and how an event changes them. */
export interface Projection {
  name: string;
  /**
   * Bump it whenever the code changes what the projection writes: at start, a projection whose
   * stored version differs is rebuilt from the start of the log (its collections dropped first).
   */
  version: number;
  topics: readonly string[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  collections: readonly CollectionSpec<any>[];
  /**
   * State the projection keeps outside the document store (sorted sets on Redis), which the
   * runner can neither drop with the collections nor find at its version by itself.
   */
  external?: {
    /** True when that state is not the one this version built (e.g. Redis was emptied, or is new): the projection is rebuilt. */
    lost(): Promise<boolean>;
    /** Empties it and marks it as built by this version, before a rebuild. */
    reset(): Promise<void>;
  };
  /**
   * Applies one event in `unit`, the unit of work of its batch: every read and write goes through
   * the unit's collections (`unit.collection(spec)`), so the batch commits with its checkpoint
   * and each event sees what the batch's earlier ones wrote. Must be idempotent on stores whose
   * units are not atomic (MongoDB): use `updateOnce` for counters.
   */
  apply(event: DomainEvent, envelope: EventEnvelope, record: LogRecord, unit: UnitOfWork): Promise<void>;
  /**
   * Runs once after the events of a batch, in its unit of work, before its checkpoint: a
   * projection that writes what the read models hold once the batch is applied (absolute values
   * read from other projections) notes in `apply` what to write and writes it here, once per
   * batch instead of once per event. A failure dead-letters the batch's last event for it.
   */
  endBatch?(unit: UnitOfWork): Promise<void>;
  /**
   * For a projection that is a function of other read models of its service (the leaderboards:
   * absolute scores read from people and groups). While it is rebuilt, the runner feeds it no
   * event (its checkpoints go on with the batches); once the runner caught up with the log, this
   * builds it in one pass over those read models, in one unit of work with the mark that it is
   * built. A start that finds the mark missing (stopped or crashed before the pass) runs it again.
   * Refreshing each person's standing batch after batch of a rebuild read and wrote the same
   * documents over and over: more than half of the casties service's document reads.
   */
  buildFromReadModels?(unit: UnitOfWork): Promise<void>;
}

/**
 * A service's read models as its requests see them: how far in the log they are. This is the
 * one way to wait for them: for a user's own writes (session consistency), before answering 404
 * for something created a moment ago, before scoring from every forecast.
 */
export interface ReadModels {
  /** True once every given position (of a topic the read models read) is applied; false after `timeoutMs`. */
  waitFor(positions: readonly LogPosition[], timeoutMs?: number): Promise<boolean>;
  /** Waits until everything the topics hold at the moment of the call is applied; false after `timeoutMs`. */
  catchUp(topics: readonly string[], timeoutMs?: number): Promise<boolean>;
}

/** How many records of the log one projection has not applied yet. */
export interface ProjectionLag {
  projection: string;
  /** Summed over every partition of the projection's topics. */
  lagEvents: number;
}

export interface ProjectionRunner extends ReadModels {
  /** The consumer group, e.g. `groups-read` (names the dead-letter topic `<group>.dead-letter`). */
  readonly group: string;
  /** Resolves once every record that existed at start has been applied. */
  caughtUp(): Promise<void>;
  /** Per projection, the records between what it applied and the end of the log now (readiness, metrics). */
  lag(): Promise<ProjectionLag[]>;
  /**
   * Holds the read models where they are: no further batch is applied until `resume`. Resolves
   * once the batch in flight (if any) is committed. For tools and tests that need a read model
   * to stay behind the log while they look at it.
   */
  pause(): Promise<void>;
  resume(): void;
  stop(): Promise<void>;
  /** Events its projections could not apply, oldest first: the pending ones, or all. */
  deadLetters(options?: { all?: boolean }): Promise<DeadLetter[]>;
  /**
   * Applies a dead letter again through the projections that failed on it (every projection of
   * its topic when it broke its contract) and records that it was replayed. If it fails again,
   * nothing changes and a DomainError (invalid_request) says why: it stays pending.
   */
  replay(id: string): Promise<DeadLetter>;
  /** Records applied since start (a rebuild's size). */
  applied(): number;
}

/** Told what an operator counts (the service's metrics). */
export interface ProjectionObserver {
  /** One record went to `<group>.dead-letter`. */
  deadLettered(group: string): void;
}

export interface ProjectionRunnerOptions {
  /** Consumer group, e.g. `groups-read`; also names the dead-letter topic `<group>.dead-letter`. */
  group: string;
  log: EventLog;
  store: DocumentStore;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  catalogs: readonly EventCatalog<any>[];
  projections: readonly Projection[];
  logger?: FastifyBaseLogger;
  /** Attempts before an event that keeps failing goes to the dead-letter topic. */
  attempts?: number;
  /** How often rebuild progress is reported (default 2 s). */
  progressEveryMs?: number;
  /** Rebuild every projection from the start of the log, whatever its stored version (an operator's rebuild). */
  rebuildAll?: boolean;
  observer?: ProjectionObserver;
  /**
   * Told of the events of each batch once it is committed: whatever it does next (e.g. telling
   * live streams that counts changed) sees the read models with them. Not awaited, so it never
   * slows the projections: it starts its own work and handles its errors. (Hosted in another
   * thread, the projections tell it once that thread said the batch is committed, on this one.)
   * A rebuild's batches, which commit together (deferred), are not told: nothing is served from
   * read models being rebuilt.
   */
  committed?: (events: readonly AppliedEvent[]) => void;
  /**
   * Other copies of the same projections in this process (the embedded profile: every service
   * keeps its own copy of the reference read models). A projection to rebuild at start is copied
   * from a finished copy instead, when one exists; an operator's rebuild (`rebuildAll`) never copies.
   */
  copies?: ReadModelCopies;
}

/**
 * Where a service's projections go on running once they caught up with the log at start, when
 * not on the event loop that answers its requests: the embedded profile runs every service's
 * projection writers in one thread of their own (system/src/projections-thread). The requests
 * read the same store; the host tells it which documents each commit changed.
 */
export interface ProjectionsHost {
  /**
   * Stops `runner` (caught up, on `options.store`), whatever follows, and resolves with a runner
   * of the same projections on the same store, going on there from the checkpoints where it
   * stopped. Its `applied` counts on from `runner`'s. When it fails, no runner of the group runs.
   */
  takeOver(runner: ProjectionRunner, options: ProjectionRunnerOptions): Promise<ProjectionRunner>;
}

/** Documents of one collection that a filter selects (the checkpoints of one projection). */
export interface DocumentsMatching {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec: CollectionSpec<any>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  filter: Filter<any>;
}

/**
 * Finished read models of one process that a store started later may copy instead of rebuilding
 * them from the log. A copy holds its collections and its checkpoints from one consistent
 * snapshot, so the runner resumes the copy exactly where the original was.
 */
export interface ReadModelCopies {
  /**
   * Copies the collections of `projection` and the documents `matching` from a finished copy of
   * the same projection code (name, version and collection specs) into this runner's store.
   * Returns the group that built the copy, or null when none did (then it is rebuilt).
   */
  copy(projection: Projection, matching: readonly DocumentsMatching[]): Promise<string | null>;
  /** Offers this store's projections, caught up, to the stores started later; until `withdraw`. */
  offer(group: string, projections: readonly Projection[]): void;
  withdraw(): void;
}

/** An event a batch applied, as `committed` is told of it. */
export interface AppliedEvent {
  event: DomainEvent;
  envelope: EventEnvelope;
  record: LogRecord;
}

type Decoded = Pick<AppliedEvent, 'event' | 'envelope'>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyCatalog = EventCatalog<any>;

/** A record's event, checked against its topic's contract; throws when it breaks it. */
function decode(catalog: AnyCatalog, value: string): Decoded {
  const envelope = EventEnvelopeSchema.parse(JSON.parse(value));
  return { event: catalog.parse(envelope), envelope };
}

/** The event id of a record whose event breaks its contract (unknown type, bad data), when it has one. */
function envelopeIdOf(value: string): string | null {
  try {
    const id = (JSON.parse(value) as { id?: unknown } | null)?.id;
    return typeof id === 'string' && id !== '' ? id : null;
  } catch {
    return null;
  }
}

/** Records decoded lately, per catalog, by offset, with their text (offsets repeat across partitions and logs), and the bytes of text kept. */
const decodedRecords = new WeakMap<AnyCatalog, { bytes: number; records: Map<number, { value: string; decoded: Decoded }> }>();
/** Text kept per catalog: the batches every runner of a process applies at about the same time (a forecast's is 600 bytes). */
const DECODED_BYTES = 4 * 1024 * 1024;
/** Runners running in this process: with one (a service of its own, in the cluster) nothing is kept to share. */
let runnersRunning = 0;

/**
 * `decode`, once for every runner of the process: in the embedded profile each service runs its
 * own, and the runners of casties, groups, social and notifications each decoded every forecast
 * (JSON and contract, about 4.5 µs). The log hands each of them the same text: found by its
 * offset, it is the same string (compared by reference, mostly). The events are shared, so
 * frozen: a projection that changed one would change it for the next runner (it throws instead).
 */
function decodedLately(catalog: AnyCatalog, record: LogRecord): Decoded {
  if (runnersRunning < 2) return deepFreeze(decode(catalog, record.value));
  let kept = decodedRecords.get(catalog);
  if (!kept) decodedRecords.set(catalog, (kept = { bytes: 0, records: new Map() }));
  const known = kept.records.get(record.offset);
  if (known?.value === record.value) return known.decoded;
  const decoded = deepFreeze(decode(catalog, record.value));
  if (known) {
    kept.records.delete(record.offset);
    kept.bytes -= known.value.length;
  }
  kept.records.set(record.offset, { value: record.value, decoded });
  kept.bytes += record.value.length;
  // Maps iterate in insertion order: the oldest go.
  for (const [offset, { value }] of kept.records) {
    if (kept.bytes <= DECODED_BYTES) break;
    kept.records.delete(offset);
    kept.bytes -= value.length;
  }
  return decoded;
}

/** How far a projection has applied one topic partition (the checkpoint commits with its changes). */
interface CheckpointDoc extends Doc {
  projection: string;
  offset: number;
}

/** The code version a projection's collections were built with. */
interface VersionDoc extends Doc {
  version: number;
  /** Rebuilt by one pass over other read models (buildFromReadModels) that has not run yet. */
  passDue?: boolean;
}

const CHECKPOINTS = collectionSpec<CheckpointDoc>({ name: 'projection_checkpoints', indexes: [{ keys: { projection: 1 } }] });
const VERSIONS = collectionSpec<VersionDoc>({ name: 'projection_versions' });

/** How long `waitFor` and `catchUp` wait by default. */
export const READ_MODELS_WAIT_MS = 3000;
/** Large batches make rebuilds fast: one unit of work writes each touched document once per batch. */
const MAX_BATCH = 10_000;
/**
 * While events keep coming, a new batch starts at most every this many ms, so events written
 * meanwhile share one unit of work: a commit writes each touched page once for all of them (under
 * load one commit per event made the commits cost more than the events). After a quiet moment the
 * next event is applied at once. Measured (bench forecasts, 32 clients, side by side with 5 ms):
 * 20 ms +13-26% accepted forecasts/s and 12-22% less CPU per forecast, as the BEGIN/COMMIT pairs
 * (a fifth of the server's time at 5 ms) fall to a quarter.
 */
const BATCH_INTERVAL_MS = 20;
/**
 * The interval after a batch of at least BUSY_BATCH events (a load enters it at about a thousand
 * events a second, and stays in it down to about 400, as batches then gather 50 ms): under such a
 * load the commits cost more than waiting, and nobody waits longer for their own write
 * (WAITED_BATCH_INTERVAL_MS). Measured side by side with 20 ms at every load (bench forecasts,
 * 32 clients, three rounds each): +4-11% accepted forecasts/s and 7-9% less CPU per forecast; 50 ms
 * at every load had given +9-21% (another run), and 100 ms another +2-8%, with the forecasts' p99
 * from 68 to 79-86 ms. A light load keeps 20 ms: what one service learns from another (a grant, a
 * policy's follow-up) shows as soon as before, as tests that read it right after expect.
 */
const BUSY_BATCH_INTERVAL_MS = 50;
const BUSY_BATCH = 20;
/**
 * The interval while a reader waits for a position its read models have not applied yet (a user
 * reading back their own write, session consistency): the batch starts at most this long after
 * the last one, whatever the load.
 */
const WAITED_BATCH_INTERVAL_MS = 20;
const batchInterval = (lastBatchRecords: number): number => (lastBatchRecords >= BUSY_BATCH ? BUSY_BATCH_INTERVAL_MS : BATCH_INTERVAL_MS);

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/**
 * Feeds a service's read models from the log (rules 5 and 7). Each batch of records is applied
 * in one unit of work together with the projections' checkpoints, so on SQLite a restart resumes
 * exactly where the last committed batch ended: a crash neither loses nor applies an event twice.
 * A projection whose version changed (or whose store is new) is rebuilt from the start of the log,
 * with its progress reported; the others resume. An event that breaks its contract, or keeps
 * failing, goes to `<group>.dead-letter` with the reason, and the runner goes on.
 */
export async function startProjections(options: ProjectionRunnerOptions): Promise<ProjectionRunner> {
  const { group, log, store, catalogs, projections, logger } = options;
  const attempts = options.attempts ?? 3;
  const checkpoints = store.collection(CHECKPOINTS);
  const versions = store.collection(VERSIONS);
  const catalogByTopic = new Map(catalogs.map((c) => [c.topic, c]));
  const topics = [...new Set(projections.flatMap((p) => p.topics))];
  const names = new Set<string>();
  for (const p of projections) {
    if (names.has(p.name)) throw new Error(`two projections are named ${p.name} in ${group}`);
    names.add(p.name);
  }

  // Which projections start over: new store, or code of another version. Their collections are
  // bulk-loaded: secondary indexes are built once they caught up (see caughtUp).
  const rebuilding: Projection[] = [];
  /** Rebuilt or copied: their old dead letters no longer apply. */
  const replaced = new Set<string>();
  /** Projections built by one pass once caught up (buildFromReadModels): fed no event until then. */
  const passDue = new Set<string>();
  for (const p of projections) {
    const stored = await versions.findOne({ _id: p.name });
    // A pass still due (a start stopped or failed before it) starts over like a rebuild: what a
    // failed pass wrote outside its unit of work (MongoDB, Redis) is dropped first.
    if (stored?.version === p.version && !stored.passDue && !options.rebuildAll && !(await p.external?.lost())) continue;
    const names = p.collections.map((c: CollectionSpec<Doc>) => c.name);
    await store.drop(names);
    await p.external?.reset();
    await checkpoints.deleteMany({ projection: p.name });
    replaced.add(p.name);
    // State kept outside the store (sorted sets) is not in a copy: such a projection is rebuilt.
    if (!options.rebuildAll && options.copies && !p.external) {
      const started = Date.now();
      // With its checkpoints and version: the runner goes on from where the copy was.
      const from = await copyOf(options.copies, p, [
        { spec: CHECKPOINTS, filter: { projection: p.name } satisfies Filter<CheckpointDoc> },
        { spec: VERSIONS, filter: { _id: p.name } satisfies Filter<VersionDoc> },
      ], logger);
      if (from !== null) {
        logger?.info({ group, projection: p.name, from, ms: Date.now() - started }, `${group}: copied ${p.name} v${p.version} from ${from} in ${((Date.now() - started) / 1000).toFixed(1)} s (no rebuild)`);
        continue;
      }
      // Nothing of a failed copy stays behind (cheap when there was nothing to copy).
      await store.drop(names);
      await checkpoints.deleteMany({ projection: p.name });
    }
    rebuilding.push(p);
    await store.beginBulkLoad(names);
    const derived = p.buildFromReadModels !== undefined;
    if (derived) passDue.add(p.name);
    await versions.replaceOne({ _id: p.name }, { _id: p.name, version: p.version, ...(derived ? { passDue: true } : {}) }, { upsert: true });
  }
  if (replaced.size > 0) await forgetRebuiltDeadLetters(store, group, replaced, replaced.size === projections.length);
  // Every collection the batches write is set up now, outside their units of work: a table set
  // up inside a unit would be set up again should the unit roll back, and one it creates is not
  // there for readers until it commits.
  for (const spec of [...projections.flatMap((p) => p.collections), DEAD_LETTERS]) store.collection(spec);

  /** Applied offsets per projection and `topic:partition`. */
  const applied = new Map<string, Map<string, number>>(projections.map((p) => [p.name, new Map()]));
  for (const doc of await checkpoints.find({})) {
    const [, ...rest] = doc._id.split('|');
    applied.get(doc.projection)?.set(rest.join('|'), doc.offset);
  }
  const checkpointId = (projection: string, key: string) => `${projection}|${key}`;
  /** The group's pending dead letters (few): one whose record a batch delivered again applies is settled (settleLetter). */
  const letters = store.collection(DEAD_LETTERS);
  const pendingLetters = new Set((await letters.find({ group, status: 'pending' })).map((l) => l._id));

  /** `projection` null: the record broke its contract (no projection saw it). Recorded in the batch's unit of work. */
  async function deadLetter(unit: UnitOfWork, record: LogRecord, reason: string, projection: string | null = null): Promise<void> {
    logger?.error({ group, topic: record.topic, offset: record.offset, reason }, 'event sent to the dead-letter topic');
    await log.append(`${group}.dead-letter`, [{ key: record.key, value: JSON.stringify({ reason, topic: record.topic, partition: record.partition, offset: record.offset, value: record.value }) }]);
    await recordDeadLetter(unit, group, record, { projection, reason }, new Date());
    pendingLetters.add(deadLetterId(record));
    options.observer?.deadLettered(group);
  }

  /**
   * A pending letter whose record the projections it names have now applied is no longer pending:
   * on MongoDB the letter may be written and its batch's checkpoint not (a crash), and the batch
   * delivered again then applies the record (its failure was passing). Replayed after that, it
   * would count twice.
   */
  async function settleLetter(unit: UnitOfWork, record: LogRecord, appliedBy: readonly Projection[]): Promise<void> {
    const id = deadLetterId(record);
    const lettersInUnit = unit.collection(DEAD_LETTERS);
    const letter = await lettersInUnit.findOne({ _id: id });
    const named = letter?.projections ? letter.projections.split(',') : projections.filter((p) => p.topics.includes(record.topic)).map((p) => p.name);
    if (letter?.status === 'pending' && !named.every((name) => appliedBy.some((p) => p.name === name))) return;
    pendingLetters.delete(id);
    if (letter?.status !== 'pending') return;
    await lettersInUnit.updateOne({ _id: id }, { $set: { status: 'replayed', replayedAt: new Date().toISOString() } });
    logger?.info({ group, id, projections: named }, 'a dead letter was applied when its batch was delivered again: marked replayed');
  }

  /** `shared`: decoded once for every runner of the process (see decodedLately); a rebuild's deferred batches decode alone. */
  function parse(record: LogRecord, shared = false): Decoded | string {
    try {
      const catalog = catalogByTopic.get(record.topic);
      if (!catalog) throw new InvalidEventError('?', `no catalog for topic ${record.topic}`);
      return shared ? decodedLately(catalog, record) : decode(catalog, record.value);
    } catch (error) {
      return `contract: ${(error as Error).message}`;
    }
  }

  /**
   * False when the projection failed on it `attempts` times: then it is dead-lettered. Each try is
   * an attempt of the unit: on SQLite a try that failed after some of its writes leaves none of
   * them (they would have counted once per try, and again when the letter is replayed).
   */
  async function applyOne(unit: UnitOfWork, projection: Projection, event: DomainEvent, envelope: EventEnvelope, record: LogRecord): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await unit.attempt(() => projection.apply(event, envelope, record, unit));
        return true;
      } catch (error) {
        if (attempt < attempts) continue;
        await deadLetter(unit, record, `${projection.name}: ${(error as Error).message}`, projection.name);
        return false;
      }
    }
  }

  async function endBatch(unit: UnitOfWork, projection: Projection, last: LogRecord): Promise<void> {
    if (!projection.endBatch) return;
    try {
      await unit.attempt(() => projection.endBatch!(unit));
    } catch (error) {
      await deadLetter(unit, last, `${projection.name} (end of batch): ${(error as Error).message}`, projection.name);
    }
  }

  /**
   * While the runner rebuilds, the batches of what the log held at start are deferred units of
   * work, except each partition's last: the store commits them together (see
   * DocumentStore.transaction), so each document the rebuild changes again and again is read,
   * written and committed once rather than once per batch. The batch that reaches a partition's
   * end at start does not defer, so it commits what was deferred before it: once caught up, every
   * batch is committed, and from then on each commits on its own, for readers to see it.
   */
  const deferUntil = new Map<string, number>();
  /** The last batch applied was deferred: it may not be committed yet. */
  let deferredSince = false;
  /**
   * Set once deferred batches were rolled back (DeferredUnitsLostError): this runner counted them
   * as applied, so it cannot go on. Every batch and catching up fail with it; the next start
   * resumes from the last commit, where their checkpoints are.
   */
  let broken: Error | null = null;
  let breakNow!: (error: Error) => void;
  const breaks = new Promise<never>((_, reject) => (breakNow = reject));
  breaks.catch(() => undefined);
  /** Passes on what `work` throws, breaking the runner first when deferred batches were lost. */
  async function guarded<R>(work: Promise<R>): Promise<R> {
    try {
      return await work;
    } catch (error) {
      if (error instanceof DeferredUnitsLostError && !broken) {
        broken = error;
        logger?.error({ group, err: error }, `${group}: batches applied since the last commit were rolled back; the read models go on from that commit at the next start`);
        breakNow(error);
      }
      throw error;
    }
  }

  // A projection built by a pass reads no event: its own line says when it is built.
  const progress = new Progress(group, rebuilding.filter((p) => !passDue.has(p.name)), logger, options.progressEveryMs ?? 2000);

  /**
   * Where the log may publish a record again (log.republishedWithin): each partition's last events
   * (RecentEvents), a copy of one of which is not applied. Only events of committed batches: a
   * batch rolled back comes again. Unset (the embedded log): nothing to skip, nothing kept.
   */
  const window = log.republishedWithin;
  const recent = new Map<string, RecentEvents>();
  const recentOf = (key: string): RecentEvents => {
    let events = recent.get(key);
    if (!events) recent.set(key, (events = new RecentEvents(window!)));
    return events;
  };
  /** The events of records already applied (delivered again, or read before where the runner resumes to know them): remembered, not applied. */
  function remember(records: readonly LogRecord[], key: string): void {
    if (!window) return;
    for (const record of records) {
      const parsed = parse(record, true);
      const id = typeof parsed === 'string' ? envelopeIdOf(record.value) : parsed.envelope.id;
      if (id) recentOf(key).add(id);
    }
  }

  /** Applies a batch of one topic partition, with the readers' checkpoints, in `unit`; `seen` gets its events' ids. */
  async function applyBatch(unit: UnitOfWork, records: readonly LogRecord[], readers: readonly Projection[], key: string, done: AppliedEvent[] | null, deferred: boolean, seen: string[]): Promise<void> {
    const last = records[records.length - 1]!;
    const checkpoints = unit.collection(CHECKPOINTS);
    const before = window ? recentOf(key) : null;
    const inBatch = new Set<string>();
    let copies = 0;
    for (const record of records) {
      const due = readers.filter((p) => !passDue.has(p.name) && (applied.get(p.name)!.get(key) ?? -1) < record.offset);
      // Applied already: read for its event's id only where copies are skipped.
      if (due.length === 0 && !before) continue;
      const parsed = parse(record, !deferred);
      // A record that breaks its contract has its copies too (each would be one more dead letter).
      const id = before && (typeof parsed === 'string' ? envelopeIdOf(record.value) : parsed.envelope.id);
      if (id) {
        if (before!.has(id) || inBatch.has(id)) {
          if (due.length > 0) copies++;
          continue;
        }
        inBatch.add(id);
        seen.push(id);
      }
      if (due.length === 0) continue;
      if (typeof parsed === 'string') {
        await deadLetter(unit, record, parsed);
        continue;
      }
      let appliedAll = true;
      for (const p of due) if (!(await applyOne(unit, p, parsed.event, parsed.envelope, record))) appliedAll = false;
      if (appliedAll && pendingLetters.size > 0 && pendingLetters.has(deadLetterId(record))) await settleLetter(unit, record, due);
      done?.push({ ...parsed, record });
    }
    if (copies > 0) logger?.warn({ group, topic: last.topic, partition: last.partition, copies, upTo: last.offset }, `${copies} copies of events applied before (published again by a relay) were skipped`);
    for (const p of readers) if (!passDue.has(p.name)) await endBatch(unit, p, last);
    for (const p of readers) await checkpoints.replaceOne({ _id: checkpointId(p.name, key) }, { _id: checkpointId(p.name, key), projection: p.name, offset: last.offset }, { upsert: true });
  }

  /** Per partition: where the runner resumed. The records before it were read only to know their events (see startAt). */
  const resumedAt = new Map<string, number>();

  async function handle(delivered: LogRecord[]): Promise<void> {
    const key = delivered[0] && positionKey(delivered[0]);
    if (!key) return;
    const from = resumedAt.get(key) ?? 0;
    const known = delivered[0]!.offset < from ? delivered.filter((r) => r.offset < from) : [];
    if (known.length > 0) remember(known, key);
    const records = known.length > 0 ? delivered.slice(known.length) : delivered;
    const first = records[0];
    if (!first) return;
    const last = records[records.length - 1]!.offset;
    const readers = projections.filter((p) => p.topics.includes(first.topic) && (applied.get(p.name)!.get(key) ?? -1) < last);
    if (readers.length === 0) return remember(records, key);
    if (broken) throw broken;
    const defer = last < (deferUntil.get(key) ?? -1);
    // A rebuild's deferred batches are not told: nobody is served from read models being rebuilt.
    const done: AppliedEvent[] | null = options.committed && !defer ? [] : null;
    let seen: string[] = [];
    await guarded(
      store.transaction(async (unit) => {
        // Checked again once the unit began: batches rolled back while this one waited for it.
        if (broken) throw broken;
        seen = [];
        await applyBatch(unit, records, readers, key, done, defer, seen);
      }, { defer }),
    );
    if (window) {
      const events = recentOf(key);
      for (const id of seen) events.add(id);
    }
    // Only once committed (or deferred: then committed with the next commit, or lost with it
    // while the runner breaks): what readers see and what the next batch skips.
    deferredSince = defer;
    for (const p of readers) applied.get(p.name)!.set(key, last);
    progress.add(records.length);
    if (done && done.length > 0) options.committed!(done);
  }

  /** The offsets of a topic partition that these projections applied. */
  const appliedBy = (readers: readonly Projection[], key: string): number[] => readers.map((p) => applied.get(p.name)!.get(key) ?? -1);
  /**
   * Where the log must be read from for a topic partition: the earliest any of its projections
   * needs. One built by a pass (passDue) needs no event, unless no other projection reads the topic.
   */
  const readFrom = (topic: string, key: string): number => {
    const all = projections.filter((p) => p.topics.includes(topic));
    const fed = all.filter((p) => !passDue.has(p.name));
    return Math.min(...appliedBy(fed.length > 0 ? fed : all, key)) + 1;
  };
  const startEnds: LogPosition[] = [];
  let behind = 0;
  for (const topic of topics) {
    for (const [partition, end] of await log.endOffsets(topic)) {
      if (end > 0) startEnds.push({ topic, partition, offset: end - 1 });
      if (end > 0 && rebuilding.length > 0) deferUntil.set(positionKey({ topic, partition }), end - 1);
      behind += Math.max(0, end - readFrom(topic, positionKey({ topic, partition })));
    }
  }
  progress.start(behind);

  // While paused, batches wait at this gate (the log redelivers nothing: the handler has not returned).
  let gate: { opened: Promise<void>; open: () => void } | null = null;
  /** Batches being applied: a log may deliver several topics' batches at once. */
  const inFlight = new Set<Promise<void>>();
  async function gated(records: LogRecord[]): Promise<void> {
    while (gate) await gate.opened;
    const run = handle(records);
    const settled = run.catch(() => undefined);
    inFlight.add(settled);
    void settled.then(() => inFlight.delete(settled));
    return run;
  }
  async function pause(): Promise<void> {
    if (!gate) {
      let open = (): void => undefined;
      const opened = new Promise<void>((resolve) => (open = resolve));
      gate = { opened, open };
    }
    await Promise.all(inFlight);
  }
  const resume = (): void => {
    const opened = gate;
    gate = null;
    opened?.open();
  };

  const subscription: Subscription = await log.subscribe({
    group,
    topics,
    maxBatch: MAX_BATCH,
    batchIntervalMs: batchInterval,
    waitedBatchIntervalMs: WAITED_BATCH_INTERVAL_MS,
    // Read from where the runner resumes, less the records a copy may follow: their events are
    // remembered (not applied), so that a copy of one of them, published again, is known.
    startAt: (topic, partition) => {
      const key = positionKey({ topic, partition });
      resumedAt.set(key, readFrom(topic, key));
      return { offset: Math.max(0, resumedAt.get(key)! - (window ?? 0)) };
    },
    handle: gated,
  });

  /**
   * Runs the passes due (see buildFromReadModels) on the read models as they are now, each with
   * its mark, in one unit of work, with no batch in flight (held as `pause` holds them; MongoDB's
   * units do not exclude each other). From then on batches feed those projections: a batch
   * committed before is in what the pass read.
   */
  async function buildDerived(): Promise<void> {
    const due = projections.filter((p) => passDue.has(p.name));
    if (due.length === 0) return;
    const started = Date.now();
    const held = gate !== null;
    await pause();
    try {
      // A pass holds every event the projections it reads applied: it goes on from the earliest
      // of their checkpoints (events after it come again, and set the same absolute values).
      const from = new Map<string, Map<string, number>>();
      for (const p of due) {
        const at = new Map<string, number>();
        for (const topic of p.topics) {
          const fed = projections.filter((o) => o.topics.includes(topic) && !passDue.has(o.name));
          if (fed.length === 0) continue;
          for (const partition of (await log.endOffsets(topic)).keys()) {
            const key = positionKey({ topic, partition });
            const offset = Math.min(...appliedBy(fed, key));
            if (offset > (applied.get(p.name)!.get(key) ?? -1)) at.set(key, offset);
          }
        }
        from.set(p.name, at);
      }
      await store.transaction(async (unit) => {
        const checkpoints = unit.collection(CHECKPOINTS);
        const versions = unit.collection(VERSIONS);
        for (const p of due) {
          await p.buildFromReadModels!(unit);
          for (const [key, offset] of from.get(p.name)!) await checkpoints.replaceOne({ _id: checkpointId(p.name, key) }, { _id: checkpointId(p.name, key), projection: p.name, offset }, { upsert: true });
          await versions.replaceOne({ _id: p.name }, { _id: p.name, version: p.version }, { upsert: true });
        }
        for (const p of due) passDue.delete(p.name);
      });
      for (const p of due) for (const [key, offset] of from.get(p.name)!) applied.get(p.name)!.set(key, Math.max(offset, applied.get(p.name)!.get(key) ?? -1));
    } catch (error) {
      // Due again at the next start, which drops what it left (on SQLite nothing of it stayed).
      for (const p of due) passDue.add(p.name);
      throw error;
    } finally {
      if (!held) resume();
    }
    const names = due.map((p) => `${p.name} v${p.version}`).join(', ');
    logger?.info({ group, projections: due.map((p) => p.name), ms: Date.now() - started }, `${group}: built ${names} from the other read models in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }

  let deriving: Promise<void> | null = null;

  const waitFor = (positions: readonly LogPosition[], timeoutMs = READ_MODELS_WAIT_MS) => subscription.waitFor(positions, timeoutMs);
  /** Settles once the replay under way (if any) is done. */
  let replaying: Promise<void> = Promise.resolve();
  runnersRunning++;
  let stopped = false;
  return {
    group,
    waitFor,
    applied: () => progress.applied,
    deadLetters: (o = {}) => listDeadLetters(store, { all: o.all ?? false }),
    async replay(id) {
      const doc = await letters.findOne({ _id: id });
      if (!doc) throw new DomainError('object_not_found', `${group} has no dead letter ${id}`);
      if (doc.status === 'replayed') throw new DomainError('invalid_request', `the dead letter ${id} was already replayed at ${doc.replayedAt ?? '?'}`);
      const record: LogRecord = { topic: doc.topic, partition: doc.partition, offset: doc.offset, key: doc.key, value: doc.value, timestamp: doc.timestamp, replayed: true };
      const parsed = parse(record);
      if (typeof parsed === 'string') throw new DomainError('invalid_request', `the event still breaks its contract, so it stays pending (${parsed})`);
      const named = doc.projections ? doc.projections.split(',') : null;
      const targets = projections.filter((p) => p.topics.includes(doc.topic) && (named === null || named.includes(p.name)));
      const replayedAt = new Date().toISOString();
      // Applied with no batch in flight, and one replay at a time: MongoDB's units do not exclude
      // each other, and a projection is written for one application at a time (a forecaster's
      // number is read back after it is counted).
      const previous = replaying;
      let done = (): void => undefined;
      replaying = new Promise<void>((resolve) => (done = resolve));
      await previous;
      const held = gate !== null;
      await pause();
      try {
        await store.transaction(async (unit) => {
          // Checked again inside the unit: of two replays at once (or one after a rebuild that
          // applied the event), only one applies it.
          const pending = unit.collection(DEAD_LETTERS);
          const current = await pending.findOne({ _id: id });
          if (current?.status !== 'pending') throw new DomainError('invalid_request', `the dead letter ${id} is no longer pending (replayed, or applied by a rebuild)`);
          for (const p of targets) {
            await p.apply(parsed.event, parsed.envelope, record, unit);
            await p.endBatch?.(unit);
          }
          await pending.updateOne({ _id: id }, { $set: { status: 'replayed', replayedAt } });
        });
      } catch (error) {
        if (error instanceof DomainError) throw error;
        throw new DomainError('invalid_request', `replaying failed again, so it stays pending: ${(error as Error).message}`);
      } finally {
        if (!held) resume();
        done();
      }
      logger?.info({ group, id, projections: targets.map((p) => p.name) }, 'dead letter replayed');
      return deadLetterView({ ...doc, status: 'replayed', replayedAt });
    },
    async catchUp(wanted, timeoutMs = READ_MODELS_WAIT_MS) {
      const positions: LogPosition[] = [];
      for (const topic of wanted) for (const [partition, end] of await log.endOffsets(topic)) if (end > 0) positions.push({ topic, partition, offset: end - 1 });
      return positions.length === 0 || waitFor(positions, timeoutMs);
    },
    async caughtUp() {
      while (!(await Promise.race([subscription.waitFor(startEnds, 60_000), breaks]))) logger?.warn({ group }, 'still applying the log');
      // Once, however many wait for the runner to catch up.
      await guarded((deriving ??= buildDerived()));
      await guarded(store.endBulkLoad());
      progress.done();
      // Only read models without dead letters are copied: a copy would not carry them.
      if (options.copies && (await listDeadLetters(store, { all: true })).length === 0) options.copies.offer(group, projections);
    },
    async lag() {
      const ends = new Map<string, Map<number, number>>();
      for (const topic of topics) ends.set(topic, await log.endOffsets(topic));
      return projections.map((p) => {
        let lagEvents = 0;
        for (const topic of p.topics) {
          for (const [partition, end] of ends.get(topic) ?? []) lagEvents += Math.max(0, end - ((applied.get(p.name)!.get(positionKey({ topic, partition })) ?? -1) + 1));
        }
        return { projection: p.name, lagEvents };
      });
    },
    pause,
    resume,
    async stop() {
      if (!stopped) runnersRunning--;
      stopped = true;
      options.copies?.withdraw();
      progress.done();
      resume();
      await subscription.stop();
      // Batches deferred so far commit now, with their checkpoints: a runner started later on the
      // same store must not apply their events again (and then commit them twice).
      if (deferredSince && !broken) await guarded(store.transaction(async () => undefined)).catch((error: unknown) => logger?.error({ group, err: error }, `${group}: committing the rebuild's last batches failed`));
    },
  };
}

/**
 * Removes from `store` the read models of projections its runner does not run: their
 * collections, checkpoints and versions. For a store that starts as a copy of a file holding
 * more projections than its own (a first start's thread, read-model-copies.ts); their dead
 * letters, if any, stay.
 */
export async function forgetProjections(store: DocumentStore, projections: readonly { name: string; collections: readonly string[] }[]): Promise<void> {
  if (projections.length === 0) return;
  await store.drop(projections.flatMap((p) => p.collections));
  const names = projections.map((p) => p.name);
  await store.collection(CHECKPOINTS).deleteMany({ projection: { $in: names } });
  await store.collection(VERSIONS).deleteMany({ _id: { $in: names } });
}

/** A copy of the projection's read model, or null: none to copy, or copying failed (then it is rebuilt, as without copies). */
async function copyOf(copies: ReadModelCopies, projection: Projection, matching: readonly DocumentsMatching[], logger: FastifyBaseLogger | undefined): Promise<string | null> {
  try {
    return await copies.copy(projection, matching);
  } catch (error) {
    logger?.warn({ projection: projection.name, err: error }, `copying ${projection.name} failed: it is rebuilt from the log`);
    return null;
  }
}

/** Reports a rebuild for people: events applied, percent, events per second. */
class Progress {
  #total = 0;
  #applied = 0;
  #started = 0;
  #lastReport = 0;
  #finished = false;

  constructor(
    private readonly group: string,
    private readonly rebuilding: readonly Projection[],
    private readonly logger: FastifyBaseLogger | undefined,
    private readonly everyMs: number,
  ) {}

  private get what(): string {
    return this.rebuilding.map((p) => `${p.name} v${p.version}`).join(', ');
  }

  start(total: number): void {
    this.#total = total;
    this.#started = this.#lastReport = Date.now();
    if (this.rebuilding.length > 0 && total > 0) this.logger?.info({ group: this.group, rebuilding: this.rebuilding.map((p) => p.name), events: total }, `${this.group}: rebuilding ${this.what} from ${fmt(total)} events in the log`);
  }

  get applied(): number {
    return this.#applied;
  }

  add(n: number): void {
    this.#applied += n;
    const now = Date.now();
    if (this.rebuilding.length === 0 || this.#finished || now - this.#lastReport < this.everyMs) return;
    this.#lastReport = now;
    const rate = this.#applied / Math.max((now - this.#started) / 1000, 0.001);
    const percent = this.#total > 0 ? Math.min(100, (this.#applied / this.#total) * 100) : 100;
    this.logger?.info({ group: this.group, applied: this.#applied, total: this.#total, percent: Math.floor(percent), eventsPerSecond: Math.round(rate) }, `${this.group}: ${fmt(this.#applied)} of ${fmt(this.#total)} events (${Math.floor(percent)}%), ${fmt(rate)} events/s`);
  }

  done(): void {
    if (this.#finished) return;
    this.#finished = true;
    if (this.rebuilding.length === 0 || this.#total === 0) return;
    const seconds = (Date.now() - this.#started) / 1000;
    this.logger?.info({ group: this.group, events: this.#applied, seconds, eventsPerSecond: Math.round(this.#applied / Math.max(seconds, 0.001)) }, `${this.group}: rebuilt ${this.what} from ${fmt(this.#applied)} events in ${seconds.toFixed(1)} s (${fmt(this.#applied / Math.max(seconds, 0.001))} events/s)`);
  }
}
