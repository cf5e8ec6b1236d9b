import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** What the process asks the checkpoint thread. */
export type ToCheckpoints = { type: 'watch'; path: string } | { type: 'unwatch'; path: string; id: number };
/** A file the thread cannot checkpoint (null: the thread itself failed, and every file). */
export interface CheckpointFailure {
  path: string | null;
  error: string;
}
/** What the checkpoint thread answers: a file let go, or one it cannot checkpoint (left to its writer's own checkpoints). */
export type FromCheckpoints = { type: 'unwatched'; id: number } | { type: 'failed'; path: string; error: string };

/**
 * How often the thread checkpoints each file. Under 32 clients posting forecasts a read-model file
 * gains about 25 MB of WAL a second, so it holds a few MB at most. Every 100 ms cost more CPU per
 * forecast than it saved (each checkpoint fsyncs twice, and copies pages written again since).
 * Every 250 ms, against checkpoints inside commits (bench forecasts --rounds 3, alternating): the
 * same forecasts/s (median 0.99), a reader's p99 10 % lower, 14 % more CPU per forecast. Only
 * once the WAL holds 4 MB (SQLite's own threshold, read from the WAL index): the same throughput,
 * but 2 runs of 6 stalled for 270-490 ms; a commit that overtakes a PASSIVE checkpoint leaves
 * part of the WAL behind, the writer cannot start it over, and it grew to the 16 MB at which a
 * commit checkpoints itself. A fixed beat finishes such a rest at its next tick.
 */
const EVERY_MS = 250;

/**
 * WAL checkpoints of the process's database files, in one thread of their own instead of inside
 * commits on the event loop.
 *
 * SQLite checkpoints a WAL in the commit that makes it pass its size (`wal_autocheckpoint`), in
 * the committing connection. Ours commit on the event loop, so every few MB of writes one commit
 * fsynced the WAL, copied it into the file and fsynced the file while every request waited.
 * Measured under 32 clients posting forecasts: the read models' commits held the event loop 22 %
 * of the time, the checkpoints among them about a third of that, 24 ms at a time, several times
 * a second (every request in flight waited; a reader's p99 shows it). Here a second connection
 * to each file, in a worker thread, runs a PASSIVE checkpoint every 250 ms: it never waits for
 * the writer or readers, nor makes them wait, and the writer starts the WAL over once it was all
 * copied. The writers keep a larger `wal_autocheckpoint` of their own as a safety net, for a
 * thread that falls behind or fails.
 *
 * Hand-written rather than a library: it is a thread with a timer and a PRAGMA, and no package
 * does it for better-sqlite3.
 */
export class BackgroundCheckpoints {
  #worker: Worker | null = null;
  #gone = false;
  /** How many stores watch each file (a file is let go when the last one stops). */
  readonly #watchers = new Map<string, number>();
  readonly #unwatched = new Map<number, () => void>();
  readonly #failureListeners = new Set<(failure: CheckpointFailure) => void>();
  #asked = 0;

  /**
   * Tells `listener` when the thread cannot checkpoint a file, or stops: those files' commits
   * then checkpoint themselves past 16 MB of WAL (they work, with longer stalls). Returns its removal.
   */
  onFailure(listener: (failure: CheckpointFailure) => void): () => void {
    this.#failureListeners.add(listener);
    return () => void this.#failureListeners.delete(listener);
  }

  #failed(failure: CheckpointFailure): void {
    for (const listener of this.#failureListeners) listener(failure);
  }

  /**
   * Checkpoints the file in the background from now on (it must exist, in WAL mode); resolves the
   * returned function once the thread let the file go (before its writer closes it).
   */
  watch(path: string): () => Promise<void> {
    const count = this.#watchers.get(path) ?? 0;
    this.#watchers.set(path, count + 1);
    if (count === 0) this.#tell({ type: 'watch', path });
    let watching = true;
    return async () => {
      if (!watching) return;
      watching = false;
      const left = this.#watchers.get(path)! - 1;
      if (left > 0) return void this.#watchers.set(path, left);
      this.#watchers.delete(path);
      const id = ++this.#asked;
      await new Promise<void>((resolve) => {
        this.#unwatched.set(id, resolve);
        this.#tell({ type: 'unwatch', path, id });
      });
    };
  }

  #tell(message: ToCheckpoints): void {
    if (this.#gone) {
      if (message.type === 'unwatch') {
        this.#unwatched.get(message.id)?.();
        this.#unwatched.delete(message.id);
      }
      return;
    }
    const worker = this.#start();
    // A store waiting for the thread to let its file go keeps the process alive until it has.
    if (message.type === 'unwatch') worker.ref();
    worker.postMessage(message);
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(workerEntry(), { workerData: { everyMs: EVERY_MS } });
    worker.on('message', (message: FromCheckpoints) => {
      if (message.type === 'unwatched') {
        this.#unwatched.get(message.id)?.();
        this.#unwatched.delete(message.id);
        if (this.#unwatched.size === 0) worker.unref();
      }
      // A file the thread cannot checkpoint is left to its writer's own, larger checkpoints.
      else this.#failed({ path: message.path, error: message.error });
    });
    worker.on('error', (error) => {
      this.#failed({ path: null, error: String(error) });
      this.#stopped(worker);
    });
    worker.on('exit', () => this.#stopped(worker));
    // The thread never keeps the process alive; it ends with it. After the listeners: adding a
    // 'message' listener refs the worker's port again, and a process that closed every store
    // (npm run seed, a rebuild) would then never exit.
    worker.unref();
    return (this.#worker = worker);
  }

  /**
   * The thread is gone (it failed, or the process is ending): nothing waits for it, and no other
   * starts, so a fault cannot turn into a loop of threads. The writers' own checkpoints go on.
   */
  #stopped(worker: Worker): void {
    if (this.#worker !== worker) return;
    this.#gone = true;
    for (const resolve of this.#unwatched.values()) resolve();
    this.#unwatched.clear();
  }
}

/** One thread for the whole process. */
export const backgroundCheckpoints = new BackgroundCheckpoints();

/** The thread's entry: built beside the bundle (dist/sqlite-checkpoints.js, from dist/ or dist/chunks/), else the sources through tsx. */
function workerEntry(): URL {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const built of [join(here, 'sqlite-checkpoints.js'), join(here, '..', 'sqlite-checkpoints.js')]) if (existsSync(built)) return pathToFileURL(built);
  return new URL('./checkpoint-worker-source.mjs', import.meta.url);
}
