// A first start on a long history builds the services' read models in worker threads, side by
// side, before the services start. Projections two services share (people, groups) are built by
// the thread that started first: one started while it builds builds its own projections first,
// then copies the shared ones from its file; one started after it finished starts as a copy of
// its whole file. Building them is CPU-bound, and one process building them in turn on its one
// event loop left the machine's other cores idle for minutes. Each worker builds one service's
// new read-model file from the log (read-only) with the projections the service itself runs (its
// `readModels`), then closes it; the service then starts on a finished file and only applies what
// came after. A worker builds its file under another name and moves it into place once closed
// (rebuild-worker.ts): one that fails, or a process killed meanwhile, leaves no file behind, and
// the service builds its read models itself when it starts. The event stores' missing stream
// indexes are built by the same threads, last, while the last read models are built.
import type { EventLog, ServiceModule } from '@castie/platform';
import type { FastifyBaseLogger } from 'fastify';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { streamIndexPath } from '@castie/platform/embedded/log-event-store';
import { finishedProjection, removePartial, sameProjection, type CopySource, type FinishedProjection } from '@castie/platform/sqlite/read-model-copies';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import type { FromWorker, ReadModelsTask, RebuildTask, StreamIndexTask, ToWorker } from './tasks.ts';

export interface ParallelRebuildOptions {
  /** Threads building at once (default: the CPUs the process may use); below 2 nothing is done here. */
  workers?: number;
  /** Only a log of at least this many events is worth threads (default 50,000); smaller ones build in a few seconds in turn. */
  minEvents?: number;
}

/** Below this, starting threads costs more than it saves. */
const MIN_EVENTS = 50_000;

/**
 * Builds, in worker threads, the read models of every service in `modules` whose file under
 * `readModelDir` does not exist yet. Services earlier in `modules` are started first, and a
 * service started after another finished copies the projections they share (people, groups)
 * from its file, as the services do in one process.
 */
export async function buildNewReadModelsInWorkers(options: {
  log: EventLog;
  logDir: string;
  readModelDir: string;
  /** Documents each thread's rebuild keeps in memory between its commits (the store's deferredDocuments). */
  heldDocuments?: number;
  /** Each thread's page cache while it bulk-loads, in MiB (the store's bulkCacheMiB). */
  bulkCacheMiB?: number;
  modules: readonly ServiceModule[];
  logger?: FastifyBaseLogger;
  parallel?: ParallelRebuildOptions;
}): Promise<void> {
  const { log, logger } = options;
  const fresh = options.modules.filter((m) => m.readModels && !existsSync(storePath(options.readModelDir, m.name)));
  const workers = Math.min(options.parallel?.workers ?? availableParallelism(), fresh.length);
  if (workers < 2) return;
  const topics = new Set(fresh.flatMap((m) => m.readModels!.catalogs.map((c) => c.topic)));
  let events = 0;
  for (const topic of topics) for (const end of (await log.endOffsets(topic)).values()) events += end;
  if (events < (options.parallel?.minEvents ?? MIN_EVENTS)) return;

  const started = Date.now();
  const ordered = await inBuildOrder(fresh);
  const services = ordered.map((m) => m.name);
  const indexes = await missingStreamIndexes(log, options.logDir, options.modules);
  logger?.info(
    { services, workers, events, streamIndexes: indexes, heldDocuments: options.heldDocuments },
    `building the read models of ${services.join(', ')} (in that order)${indexes.length > 0 ? `, then the stream indexes of ${indexes.join(', ')},` : ''} from ${events.toLocaleString('en-US')} events in ${workers} threads`,
  );
  // The stream indexes come last: whichever thread is done with read models first builds them
  // while the other finishes (the threads end together instead of the indexes after them).
  const queue: RebuildTask[] = [
    ...ordered.map((m): ReadModelsTask => ({
      kind: 'read-models',
      service: m.name,
      logDir: options.logDir,
      storePath: storePath(options.readModelDir, m.name),
      ...(options.heldDocuments ? { heldDocuments: options.heldDocuments } : {}),
      ...(options.bulkCacheMiB ? { bulkCacheMiB: options.bulkCacheMiB } : {}),
      sources: [],
      building: [],
    })),
    ...indexes.map((topic): StreamIndexTask => ({ kind: 'stream-index', topic, logDir: options.logDir })),
  ];
  const groupOf = new Map<string, string>(ordered.map((m) => [m.name, m.readModels!.group]));
  const finished: CopySource[] = [];
  /** The threads building read models now, by service: each is told when another finishes (it may be waiting to copy from it). */
  const running = new Map<string, Worker>();
  const thread = async (): Promise<void> => {
    for (let task = queue.shift(); task; task = queue.shift()) {
      if (task.kind === 'stream-index') {
        // A failure is the event store's to report when its service opens it, as without threads.
        await runWorker(task, log, logger, () => undefined).catch((error: unknown) => logger?.warn({ topic: task.topic, err: error }, `indexing the streams of ${task.topic} in a thread failed: its event store indexes them when it opens`));
        continue;
      }
      const { service } = task;
      task.sources = [...finished];
      task.building = [...running.keys()];
      let source: CopySource | null = null;
      try {
        const offered = await runWorker(task, log, logger, (worker) => running.set(service, worker));
        if (offered) finished.push((source = { group: groupOf.get(service)!, path: task.storePath, projections: offered }));
      } catch (error) {
        removePartial(task.storePath);
        logger?.warn({ service, err: error }, `building the read models of ${service} in a thread failed: the service builds them itself when it starts`);
      } finally {
        running.delete(service);
        for (const other of running.values()) other.postMessage({ type: 'finished', service, source } satisfies ToWorker);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, thread));
  logger?.info({ ms: Date.now() - started }, `read models built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * The topics of the modules' event stores whose stream index (`<topic>.streams.db` beside the
 * log) does not exist, largest first: a thread builds each from the log, and the event store
 * then opens on a finished index.
 */
async function missingStreamIndexes(log: EventLog, logDir: string, modules: readonly ServiceModule[]): Promise<string[]> {
  const missing = [...new Set(modules.flatMap((m) => m.eventStores))].filter((topic) => !existsSync(streamIndexPath(logDir, topic)));
  const sizes = new Map<string, number>();
  for (const topic of missing) sizes.set(topic, [...(await log.endOffsets(topic)).values()].reduce((a, b) => a + b, 0));
  return missing.filter((topic) => sizes.get(topic)! > 0).sort((a, b) => sizes.get(b)! - sizes.get(a)!);
}

const storePath = (dir: string, service: string) => join(dir, `${service}.db`);

/**
 * Removes what a start killed while threads built read models left behind (their partial files,
 * see rebuild-worker.ts), whether or not this start builds in threads: a thread starts its file
 * afresh, and a service that builds its own never uses one.
 */
export function removeUnfinishedReadModels(readModelDir: string, modules: readonly ServiceModule[]): void {
  for (const m of modules) if (m.readModels) removePartial(storePath(readModelDir, m.name));
}

/**
 * The order the threads take the services in: as `modules`, except that one whose projections
 * are all built by a service before it (social: people and friendships, which groups builds)
 * goes last. Taken early, its thread only waits for the other to finish, then copies; last, the
 * thread that frees first copies them, and the services that build from the log start sooner.
 * (On two threads the longest path of a first start was groups, social, then notifications; it
 * is now groups, then notifications, while casties, then social, run beside them.)
 */
async function inBuildOrder(modules: readonly ServiceModule[]): Promise<ServiceModule[]> {
  // The projections' names, versions and collections, made on a store in memory only to be compared.
  const scratch = openSqliteDocumentStore({ path: ':memory:' });
  try {
    const built = modules.map((m) => m.readModels!.projections(scratch).filter((p) => !p.buildFromReadModels).map(finishedProjection));
    const copiesOnly = modules.map((_, i) => built[i]!.every((p) => built.slice(0, i).some((earlier) => earlier.some((e) => sameProjection(e, p)))));
    return [...modules.filter((_, i) => !copiesOnly[i]), ...modules.filter((_, i) => copiesOnly[i])];
  } finally {
    await scratch.close();
  }
}

/** The worker's entry: built beside the bundle (dist/rebuild-worker.js, from dist/ or dist/chunks/), else the sources through tsx. */
function workerEntry(): URL {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const built of [join(here, 'rebuild-worker.js'), join(here, '..', 'rebuild-worker.js')]) if (existsSync(built)) return pathToFileURL(built);
  return new URL('./rebuild-worker-source.mjs', import.meta.url);
}

/**
 * The young generation of a rebuild's thread, in MiB (V8 gives a thread 48): a rebuild makes a
 * parsed event, an update and a document version per event, nearly all of them dead by the next
 * batch, and a larger nursery collects them less often for the same work.
 */
const REBUILD_YOUNG_GENERATION_MIB = 96;

/** Runs one task in its own thread; resolves with what it offers for copying (null: dead letters, nothing to copy). */
function runWorker(task: RebuildTask, log: EventLog, logger: FastifyBaseLogger | undefined, started: (worker: Worker) => void): Promise<FinishedProjection[] | null> {
  // Only the young generation is set: the old one stays the process's (rebuildSizing reads it).
  const worker = new Worker(workerEntry(), { workerData: task, resourceLimits: { maxYoungGenerationSizeMb: REBUILD_YOUNG_GENERATION_MIB } });
  started(worker);
  return new Promise((resolve, reject) => {
    let offered: FinishedProjection[] | null | undefined;
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'log') logger?.[message.level]({ ...message.fields, thread: task.kind === 'read-models' ? task.service : task.topic }, message.msg);
      else if (message.type === 'done') offered = message.offered;
      else if (message.type === 'append') {
        const answer = (reply: ToWorker) => worker.postMessage(reply);
        log.append(message.topic, message.records).then(
          (positions) => answer({ type: 'appended', id: message.id, positions }),
          (error: unknown) => answer({ type: 'appended', id: message.id, error: error instanceof Error ? error.message : String(error) }),
        );
      }
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (offered !== undefined) resolve(offered);
      else reject(new Error(`the thread building ${task.kind === 'read-models' ? task.service : `the stream index of ${task.topic}`} exited with ${code} before it finished`));
    });
  });
}
