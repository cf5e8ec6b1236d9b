// What the main thread and a rebuild worker tell each other (system/src/rebuild).
import type { LogPosition, NewLogRecord } from '@castie/platform';
import type { ThreadLogLine } from '../thread-logger.ts';
import type { CopySource, FinishedProjection } from '@castie/platform/sqlite/read-model-copies';

/** One thing a first start derives from the log, in a thread: a service's read models, or an event store's stream index. */
export type RebuildTask = ReadModelsTask | StreamIndexTask;

/** One service's read models to build into a new file. */
export interface ReadModelsTask {
  kind: 'read-models';
  service: string;
  logDir: string;
  storePath: string;
  /** The store's deferredDocuments (default: the store's). */
  heldDocuments?: number;
  /** The store's page cache while bulk-loading, in MiB (default: the store's). */
  bulkCacheMiB?: number;
  sources: CopySource[];
  /**
   * Services whose threads are building when this one starts. Projections they build too (people,
   * groups) are copied from their files once they finish, not built here a second time.
   */
  building: string[];
}

/** The stream index of one topic's event store (`<topic>.streams.db` beside the log), built from the log. */
export interface StreamIndexTask {
  kind: 'stream-index';
  topic: string;
  logDir: string;
}

export type FromWorker =
  | ThreadLogLine
  | { type: 'append'; id: number; topic: string; records: NewLogRecord[] }
  /** Finished: the read models it offers for copying (null: dead letters, or a stream index). */
  | { type: 'done'; offered: FinishedProjection[] | null };

export type ToWorker =
  | { type: 'appended'; id: number; positions?: LogPosition[]; error?: string }
  /** A thread finished building `service`: its file as a source, or null (it failed, or has dead letters). */
  | { type: 'finished'; service: string; source: CopySource | null };
