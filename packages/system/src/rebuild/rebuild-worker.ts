// A rebuild worker (system/src/rebuild/parallel.ts): builds one service's read models into a new
// file from the log, read-only, then exits. Its dead letters are appended by the main thread,
// which owns the log.
import { startProjections, type EventLog, type LogPosition } from '@castie/platform';
import { createFileEventLog } from '@castie/platform/embedded/file-event-log';
import { finishedProjection, sameProjection, SqliteReadModelCopies, type FinishedProjection } from '@castie/platform/sqlite/read-model-copies';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import type { FastifyBaseLogger } from 'fastify';
import { parentPort, workerData } from 'node:worker_threads';
import { allServices } from '../services.ts';
import type { FromWorker, RebuildTask, ToWorker } from './tasks.ts';

const task = workerData as RebuildTask;
const port = parentPort!;
const tell = (message: FromWorker) => port.postMessage(message);

const definition = allServices().find((m) => m.name === task.service)?.readModels;
if (!definition) throw new Error(`service ${task.service} has no read models`);

// The main thread's logger writes the lines: one log stream, the worker's service named in each.
const line =
  (level: 'info' | 'warn' | 'error') =>
  (fields: unknown, msg?: string): void => {
    if (typeof fields === 'string') return tell({ type: 'log', level, fields: {}, msg: fields });
    const plain = fields && typeof fields === 'object' ? Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v instanceof Error ? { message: v.message, stack: v.stack } : v])) : {};
    tell({ type: 'log', level, fields: plain, msg: msg ?? '' });
  };
const logger = { info: line('info'), warn: line('warn'), error: line('error'), fatal: line('error'), debug: () => undefined, trace: () => undefined, level: 'info' } as unknown as FastifyBaseLogger;
(logger as unknown as { child: () => FastifyBaseLogger }).child = () => logger;

const waiting = new Map<number, { resolve: (positions: LogPosition[]) => void; reject: (error: Error) => void }>();
let asked = 0;
/** Files of finished threads, and the threads still building (see RebuildTask.building). */
const sources = [...task.sources];
const building = new Set(task.building);
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
// The thread bulk-loads, then closes: the main thread's stores checkpoint in the background once they serve.
const store = openSqliteDocumentStore({ path: task.storePath, backgroundCheckpoints: false, ...(task.heldDocuments ? { deferredDocuments: task.heldDocuments } : {}) });
const projections = definition.projections(store);
const copyable = (p: FinishedProjection) => sources.some((s) => s.projections.some((f) => sameProjection(f, p)));

// What the threads building now will offer (their projections, made on a store in memory only
// to be compared): those of ours they build and no finished file has are copied once they finish.
const coming: FinishedProjection[] = [];
if (building.size > 0) {
  const scratch = openSqliteDocumentStore({ path: ':memory:' });
  for (const service of building) coming.push(...(allServices().find((m) => m.name === service)?.readModels?.projections(scratch).map(finishedProjection) ?? []));
  await scratch.close();
}
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
tell({ type: 'done', offered });
port.close();
