// The thread of background-checkpoints.ts: holds a connection to each watched database file and,
// every few milliseconds, moves what its WAL holds into the file (a PASSIVE checkpoint: it never
// waits for, nor blocks, the process's readers and writer). The build bundles it into
// dist/sqlite-checkpoints.js; from the sources it runs through checkpoint-worker-source.mjs.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { FromCheckpoints, ToCheckpoints } from './background-checkpoints.ts';

const port = parentPort!;
const { everyMs } = workerData as { everyMs: number };
const tell = (message: FromCheckpoints) => port.postMessage(message);
const files = new Map<string, Database.Database>();

port.on('message', (message: ToCheckpoints) => {
  if (message.type === 'watch') {
    try {
      if (!files.has(message.path)) files.set(message.path, new Database(message.path, { fileMustExist: true }));
    } catch (error) {
      tell({ type: 'failed', path: message.path, error: String(error) });
    }
  } else {
    files.get(message.path)?.close();
    files.delete(message.path);
    tell({ type: 'unwatched', id: message.id });
  }
});

setInterval(() => {
  for (const [path, db] of files) {
    try {
      // [busy, frames in the WAL, frames moved]: nothing to do costs a look at the WAL's header.
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch (error) {
      db.close();
      files.delete(path);
      tell({ type: 'failed', path, error: String(error) });
    }
  }
}, everyMs);
