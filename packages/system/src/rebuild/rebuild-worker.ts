// A rebuild worker (system/src/rebuild/parallel.ts): builds one service's read models into a new
// file from the log, read-only, or one event store's stream index, then exits. Its dead letters
// are appended by the main thread, which owns the log.
import { startProjections, type EventLog, type LogPosition } from '@castie/platform';
import { createFileEventLog } from '@castie/platform/embedded/file-event-log';
import { createLogEventStore } from '@castie/platform/embedded/log-event-store';
import { fileToStartFrom, finishedProjection, moveIntoPlace, partialOf, sameProjection, SqliteReadModelCopies, startAsCopyOf, type FinishedProjection } from '@castie/platform/sqlite/read-model-copies';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import { parentPort, workerData } from 'node:worker_threads';
import { allServices } from '../services.ts';
import { threadLogger } from '../thread-logger.ts';
import type { FromWorker, ReadModelsTask, RebuildTask, StreamIndexTask, ToWorker } from './tasks.ts';

const task = workerData as RebuildTask;
const port = parentPort!;
const tell = (message: FromWorker) => port.postMessage(message);

const logger = threadLogger(tell);

const waiting = new Map<number, { resolve: (positions: LogPosition[]) => void; reject: (error: Error) => void }>();
let asked = 0;
/** Files of finished threads, and the threads still building (see ReadModelsTask.building). */
const sources = task.kind === 'read-models' ? [...task.sources] : [];
const building = new Set(task.kind === 'read-models' ? task.building : []);
let told = (): void => undefined;
port.on('message', (message: ToWorker) => {
  if (message.type === 'finished') {
    building.delete(message.service);
    if (message.source) sources.push(message.source);
    return told();
  }
  const pending = waiting.get(message.id);
  waiting.delete(message.id);
  if (message.positions) pending?.resolve(message.positions);
  else pending?.reject(new Error(message.error ?? 'append failed'));
});

tell({ type: 'done', offered: task.kind === 'read-models' ? await buildReadModels(task) : await indexStreams(task) });
port.close();

/** The event store of the task's topic opened on the log, read-only, which builds its stream index; then closed. */
async function indexStreams(task: StreamIndexTask): Promise<null> {
  const started = Date.now();
  const fileLog = await createFileEventLog({ dir: task.logDir, readOnly: true });
  try {
    const store = await createLogEventStore({ log: fileLog, topic: task.topic, backgroundCheckpoints: false });
    await store.close();
    const events = (await fileLog.endOffsets(task.topic)).get(0) ?? 0;
    logger.info({ topic: task.topic, events, ms: Date.now() - started }, `${task.topic}: indexed the streams of ${events.toLocaleString('en-US')} events of the log in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await fileLog.close();
  }
  return null;
}

/**
 * Builds the service's read models into a new file, made under another name and moved into place
 * once closed (a thread that fails or a process killed leaves no file the service would go on
 * from); resolves with what it offers for copying (null: dead letters).
 */
async function buildReadModels(task: ReadModelsTask): Promise<FinishedProjection[] | null> {
  const definition = allServices().find((m) => m.name === task.service)?.readModels;
  if (!definition) throw new Error(`service ${task.service} has no read models`);
  const fileLog = await createFileEventLog({ dir: task.logDir, readOnly: true });
  const log: EventLog = {
    ...fileLog,
    append: (topic, records) =>
      new Promise((resolve, reject) => {
        const id = ++asked;
        waiting.set(id, { resolve, reject });
        tell({ type: 'append', id, topic, records: records.map((r) => ({ key: r.key, value: r.value })) });
      }),
  };
  // The projections of this service and of the threads building now, made on a store in memory
  // only to be compared.
  const scratch = openSqliteDocumentStore({ path: ':memory:' });
  const ours = definition.projections(scratch).map(finishedProjection);
  /** What the threads building now will offer: those of ours they build and no finished file has are copied once they finish. */
  const coming = [...building].flatMap((service) => allServices().find((m) => m.name === service)?.readModels?.projections(scratch).map(finishedProjection) ?? []);
  await scratch.close();

  // A finished file holding some of our projections (the people, friendships and groups the
  // groups thread built) is where this file starts: copied whole, less what is not ours. (No
  // partial file is left from an earlier start: the process removed them before the threads.)
  const start = fileToStartFrom(sources, ours);
  const startedAs = start && (await startAsCopyOf(start.source.path, task.storePath, start.extra)) ? start : null;
  // The thread bulk-loads its private file, then closes it: the main thread's stores open it in WAL mode.
  const store = openSqliteDocumentStore({ path: partialOf(task.storePath), privateFile: true, backgroundCheckpoints: false, ...(task.heldDocuments ? { deferredDocuments: task.heldDocuments } : {}), ...(task.bulkCacheMiB ? { bulkCacheMiB: task.bulkCacheMiB } : {}) });
  if (startedAs) {
    logger.info({ group: definition.group, from: startedAs.source.group }, `${definition.group}: started as a copy of the file of ${startedAs.source.group} (${startedAs.source.projections.filter((p) => !startedAs.extra.includes(p)).map((p) => `${p.name} v${p.version}`).join(', ')})`);
  }
  const projections = definition.projections(store);
  const copyable = (p: FinishedProjection) => sources.some((s) => s.projections.some((f) => sameProjection(f, p)));
  const later = projections.filter((p) => !copyable(finishedProjection(p)) && coming.some((c) => sameProjection(c, finishedProjection(p))));

  if (later.length > 0) {
    // First our own projections (not those built by a pass: they read the shared ones), side by
    // side with the thread building the shared ones; then, once it offers them, the rest.
    // (None of its own, such as social's: it only waits. What finished files have is copied.)
    const own = projections.filter((p) => !later.includes(p) && !p.buildFromReadModels);
    if (own.length > 0) {
      const copies = new SqliteReadModelCopies(sources).for(store);
      const first = await startProjections({ group: definition.group, log, store, catalogs: definition.catalogs, projections: own, copies: { ...copies, offer: () => undefined }, logger });
      await first.caughtUp();
      await first.stop();
    }
    const ready = () => later.every((p) => copyable(finishedProjection(p))) || building.size === 0;
    while (!ready()) await new Promise<void>((resolve) => (told = resolve));
  }

  // The files other threads finished are sources; what the runner offers once caught up (only read
  // models without dead letters, as in one process) is what this thread tells the main thread.
  let offered: FinishedProjection[] | null = null;
  const copies = new SqliteReadModelCopies(sources).for(store);
  const runner = await startProjections({
    group: definition.group,
    log,
    store,
    catalogs: definition.catalogs,
    projections,
    copies: { ...copies, offer: (_group, finished) => (offered = finished.map(finishedProjection)) },
    logger,
  });
  await runner.caughtUp();
  await runner.stop();
  await store.close();
  await fileLog.close();
  moveIntoPlace(task.storePath);
  return offered;
}
