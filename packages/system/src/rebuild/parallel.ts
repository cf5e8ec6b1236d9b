// A first start on a long history builds the services' read models in worker threads, side by
// side, before the services start. Projections two services share (people, groups) are built by
// the thread that started first: one started while it builds builds its own projections first,
// then copies the shared ones from its file. Building them is CPU-bound, and one process building them in
// turn on its one event loop left the machine's other cores idle for minutes. Each worker builds
// one service's new read-model file from the log (read-only) with the projections the service
// itself runs (its `readModels`), then closes it; the service then starts on a finished file and
// only applies what came after. A worker that fails leaves a consistent prefix behind (each batch
// commits with its checkpoints): the service goes on from there itself.
import type { EventLog, ServiceModule } from '@castie/platform';
import type { FastifyBaseLogger } from 'fastify';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { finishedProjection, sameProjection, type CopySource, type FinishedProjection } from '@castie/platform/sqlite/read-model-copies';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import type { FromWorker, RebuildTask, ToWorker } from './tasks.ts';

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
  modules: readonly ServiceModule[];
  logger?: FastifyBaseLogger;
  parallel?: ParallelRebuildOptions;
  /** Called once, when the first thread finds nothing left to build: a core is free for other work of the start. */
  coreFree?: () => void;
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
  const queue = await inBuildOrder(fresh);
  const services = queue.map((m) => m.name);
  logger?.info({ services, workers, events }, `building the read models of ${services.join(', ')} (in that order) from ${events.toLocaleString('en-US')} events in ${workers} threads`);
  const finished: CopySource[] = [];
  /** The threads building now, by service: each is told when another finishes (it may be waiting to copy from it). */
  const running = new Map<string, Worker>();
  const thread = async (): Promise<void> => {
    for (let module = queue.shift(); module; module = queue.shift()) {
      const task: RebuildTask = {
        service: module.name,
        logDir: options.logDir,
        storePath: storePath(options.readModelDir, module.name),
        ...(options.heldDocuments ? { heldDocuments: options.heldDocuments } : {}),
        sources: [...finished],
        building: [...running.keys()],
      };
      let source: CopySource | null = null;
      try {
        const offered = await runWorker(task, log, logger, (worker) => running.set(module.name, worker));
        if (offered) finished.push((source = { group: module.readModels!.group, path: task.storePath, projections: offered }));
      } catch (error) {
        logger?.warn({ service: module.name, err: error }, `building the read models of ${module.name} in a thread failed: the service goes on from where it stopped when it starts`);
      } finally {
        running.delete(module.name);
        for (const other of running.values()) other.postMessage({ type: 'finished', service: module.name, source } satisfies ToWorker);
      }
    }
    if (!freed) {
      freed = true;
      options.coreFree?.();
    }
  };
  let freed = false;
  await Promise.all(Array.from({ length: workers }, thread));
  logger?.info({ ms: Date.now() - started }, `read models built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

const storePath = (dir: string, service: string) => join(dir, `${service}.db`);

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

/** Runs one task in its own thread; resolves with what it offers for copying (null: dead letters, nothing to copy). */
function runWorker(task: RebuildTask, log: EventLog, logger: FastifyBaseLogger | undefined, started: (worker: Worker) => void): Promise<FinishedProjection[] | null> {
  const worker = new Worker(workerEntry(), { workerData: task });
  started(worker);
  return new Promise((resolve, reject) => {
    let offered: FinishedProjection[] | null | undefined;
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'log') logger?.[message.level]({ ...message.fields, thread: task.service }, message.msg);
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
      else reject(new Error(`the thread building ${task.service} exited with ${code} before it finished`));
    });
  });
}
